// COpenCVShim: OpenCV's cascade face detector and template matching behind a pure C
// interface (the CNN runs on XNNPACK: CXNNPack).
// Opaque handles, plain result structs, and every C++ exception caught inside the shim and
// returned as a status with a message: an exception must never unwind through Swift frames.
#ifndef COPENCVSHIM_H
#define COPENCVSHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    FKCV_OK = 0,
    FKCV_LOAD_FAILED = 1,       // the file is missing, empty or not a cascade
    FKCV_OPENCV_EXCEPTION = 2,  // cv::Exception; the message says which
    FKCV_STD_EXCEPTION = 3,     // std::exception (e.g. std::bad_alloc)
    FKCV_UNKNOWN_EXCEPTION = 4, // anything else thrown
    FKCV_INVALID_ARGUMENT = 5,  // checked before OpenCV sees it
} fkcv_status;

typedef struct fkcv_cascade fkcv_cascade;

typedef struct {
    int32_t x, y, width, height;
} fkcv_rect;

typedef struct {
    double scale_factor;     // > 1
    int32_t min_neighbors;   // >= 0
    int32_t min_width, min_height; // 0 = the cascade's own window
    int32_t max_width, max_height; // 0 = no limit
} fkcv_detect_params;

/// Loads a cascade (Haar or LBP XML). On failure *out is NULL and message holds the reason.
fkcv_status fkcv_cascade_create(const char *path, fkcv_cascade **out, char *message, size_t message_capacity);
void fkcv_cascade_destroy(fkcv_cascade *cascade);

/// Runs detectMultiScale on an 8-bit gray image. Writes at most `capacity` rectangles and the
/// total number found to *found (which may exceed capacity).
fkcv_status fkcv_cascade_detect(fkcv_cascade *cascade, const uint8_t *gray, int32_t width, int32_t height,
                                size_t bytes_per_row, const fkcv_detect_params *params, fkcv_rect *rects,
                                int32_t capacity, int32_t *found, char *message, size_t message_capacity);

/// Threads OpenCV's parallel loops may use (process-wide; 0 = OpenCV's default). Returns the
/// previous value.
int32_t fkcv_set_threads(int32_t threads);

/// Threads OpenCV's parallel loops use now (-1 if OpenCV could not say).
int32_t fkcv_get_threads(void);

/// Normalised cross-correlation (cv::matchTemplate, TM_CCOEFF_NORMED) of an 8-bit gray
/// template over an 8-bit gray search image at least as large: writes the best score (-1…1)
/// and the top-left corner where it is, plus the scores just left/right and above/below it
/// (for sub-pixel refinement; equal to the best at the borders).
typedef struct {
    float score;
    int32_t x, y;
    float left, right, up, down;
} fkcv_match;

fkcv_status fkcv_match_template(const uint8_t *image, int32_t width, int32_t height, size_t bytes_per_row,
                                const uint8_t *templ, int32_t template_width, int32_t template_height,
                                size_t template_bytes_per_row, fkcv_match *result, char *message,
                                size_t message_capacity);

#ifdef __cplusplus
}
#endif
#endif
