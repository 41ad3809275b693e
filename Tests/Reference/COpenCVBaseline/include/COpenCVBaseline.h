// COpenCVBaseline: OpenCV's own image functions, for tests and benchmarks to compare FrameKit's
// filters against on the same buffers. Linked only by tests and Benchmarks/, never by a product.
#ifndef COPENCVBASELINE_H
#define COPENCVBASELINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A borrowed 8-bit image: rows x cols elements of `channels` bytes, `step` bytes per row.
typedef struct {
    int32_t rows, cols, channels;
    uint8_t *data;
    size_t step;
} fkcvb_image;

/// The cv::cvtColor conversions FrameKit compares against (mapped to cv::COLOR_* in the shim).
typedef enum {
    FKCVB_BGRA2GRAY, FKCVB_RGB2GRAY, FKCVB_YUV2GRAY_420, FKCVB_YUV2GRAY_YUY2,
    FKCVB_YUV2RGB_NV12, FKCVB_YUV2BGRA_NV12, FKCVB_YUV2RGB_I420, FKCVB_YUV2BGRA_I420,
    FKCVB_YUV2RGB_YUY2, FKCVB_YUV2BGRA_YUY2, FKCVB_RGB2YUV_I420, FKCVB_BGRA2YUV_I420,
} fkcvb_color_code;

/// Each returns 0 on success, -1 if OpenCV threw (message in `message`).
int fkcvb_cvt_color(fkcvb_image src, fkcvb_image dst, int32_t code, char *message, size_t capacity);
/// interpolation: 1 = INTER_LINEAR, 3 = INTER_AREA
int fkcvb_resize(fkcvb_image src, fkcvb_image dst, int32_t interpolation, char *message, size_t capacity);
int fkcvb_box_blur(fkcvb_image src, fkcvb_image dst, int32_t kernel, char *message, size_t capacity);
int fkcvb_gaussian_blur(fkcvb_image src, fkcvb_image dst, int32_t kernel, char *message, size_t capacity);
/// |dx| + |dy| of 3x3 Sobel, saturated to 8 bits (the L1 magnitude).
int fkcvb_sobel_magnitude(fkcvb_image src, fkcvb_image dst, char *message, size_t capacity);
int fkcvb_threshold(fkcvb_image src, fkcvb_image dst, double threshold, double max_value, char *message, size_t capacity);
int fkcvb_equalize_hist(fkcvb_image src, fkcvb_image dst, char *message, size_t capacity);
/// rotation: 0 = 90 clockwise, 1 = 180, 2 = 90 counter-clockwise (cv::RotateFlags)
int fkcvb_rotate(fkcvb_image src, fkcvb_image dst, int32_t rotation, char *message, size_t capacity);
/// flip_code: 1 = around the vertical axis (mirror)
int fkcvb_flip(fkcvb_image src, fkcvb_image dst, int32_t flip_code, char *message, size_t capacity);
/// Opens a video file with OpenCV's VideoCapture (an independent reader of FrameKit's AVI files)
/// and decodes every frame. backend: 0 = FFmpeg, 1 = OpenCV's own MJPEG reader. Returns 0 if
/// the file opened; frames decoded, the header's frame count, size and rate are written out.
int fkcvb_video_probe(const char *path, int32_t backend, int32_t *decoded, int32_t *header_frames, int32_t *width,
                      int32_t *height, double *fps, char *message, size_t capacity);
/// CenterFace as its reference code runs it, entirely in OpenCV: cv::resize (INTER_LINEAR) of
/// an RGB24 image to content_width x content_height, zero padding to a multiple of 32,
/// cv::dnn::blobFromImage, Net::forward, the reference decoding and NMS (IoU 0.3). Boxes
/// (x0, y0, x1, y1, score) in the network input's pixels; returns how many (at most capacity),
/// or -1 if OpenCV threw.
int fkcvb_centerface(const char *model, fkcvb_image rgb, int32_t content_width, int32_t content_height,
                     float threshold, float *boxes, int32_t capacity, char *message, size_t message_capacity);
/// An ONNX network run by OpenCV's dnn module on a planar [1, channels, height, width] input:
/// the outputs named in `names`, back to back in `out` (NCHW, as OpenCV gives them), their
/// sizes in `counts`. Returns the floats written, or -1 if OpenCV threw or `out` is too small.
int64_t fkcvb_dnn_forward(const char *model, const float *input, int32_t channels, int32_t height, int32_t width,
                          const char *const *names, int32_t name_count, float *out, size_t capacity, int64_t *counts,
                          char *message, size_t message_capacity);
/// Sets OpenCV's worker-thread count (1 for a fair single-thread comparison).
void fkcvb_set_num_threads(int32_t threads);

#ifdef __cplusplus
}
#endif
#endif
