/*
 * framekit.h: FrameKit's C API (libFrameKitC.so), for programs and languages that cannot link
 * Swift: images, colour conversion and resize, filters, the CNN face detector and tracker, and
 * frame sources (files, folders of images, network streams, V4L2 cameras, the virtual camera)
 * with their drop accounting. Python's `framekit` package is built on it (docs/python.md).
 *
 * Conventions
 * - Handles are opaque; each `*_new`/`*_open`/function giving one out has a matching free.
 *   Freeing NULL does nothing.
 * - Functions that can fail return an fk_status and fill `error` (may be NULL) with the status
 *   and FrameKit's message; on failure, out parameters are left NULL/0.
 * - A detector may be used by several threads at once; a tracker, a source and a frame by one
 *   thread at a time. No call keeps a pointer it was given after it returns, except
 *   fk_frame_wrap (see there).
 * - Nothing here exits, traps or throws across the API: misuse (a NULL handle, a bad size) is
 *   FK_ERR_INVALID_ARGUMENT.
 * - Frames are at most 16384 pixels a side and 33,177,600 pixels (8K, 7680x4320) in all,
 *   FrameKit's pixel budget for any buffer: a larger one is FK_ERR_INVALID_ARGUMENT (shrink a
 *   48 MP photo first).
 *
 * Versioning: FK_API_VERSION changes when a declaration here changes; fk_api_version() is the
 * version the library was built with, and a caller checks they match.
 */
#ifndef FRAMEKIT_H
#define FRAMEKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FK_API_VERSION 1

/* Status codes. */
enum {
    FK_OK = 0,
    /* A source has no more frames (not an error). */
    FK_END = 1,
    /* A NULL handle, a size or format out of range, options that do not go together. */
    FK_ERR_INVALID_ARGUMENT = 2,
    /* The model file is missing, corrupt, or uses an operator the detector does not run. */
    FK_ERR_MODEL = 3,
    /* The network could not be set up or run. */
    FK_ERR_DETECTION = 4,
    /* A source could not be opened or read: no such file, an unreadable format, a stream that
       dropped for good, a camera that went away. */
    FK_ERR_SOURCE = 5,
    /* Anything else FrameKit reports (the message says what). */
    FK_ERR_INTERNAL = 6
};
typedef int32_t fk_status;

typedef struct fk_error {
    fk_status status;
    char message[512]; /* NUL-terminated, UTF-8; truncated at a character boundary */
} fk_error;

/* Pixel formats (FrameKit's PixelFormat). */
enum {
    FK_FORMAT_RGB24 = 0, /* 3 bytes a pixel, R G B */
    FK_FORMAT_BGRA32 = 1, /* 4 bytes a pixel, B G R A */
    FK_FORMAT_GRAY8 = 2, /* 1 byte a pixel */
    FK_FORMAT_NV12 = 3, /* Y plane, then interleaved CbCr at half size (video range) */
    FK_FORMAT_I420 = 4, /* Y, Cb, Cr planes, chroma at half size */
    FK_FORMAT_YUYV = 5 /* 2 bytes a pixel, Y0 Cb Y1 Cr */
};

/* Why a frame was dropped (FrameKit's DropReason), an index into fk_source_counts.dropped. */
enum {
    FK_DROP_FRAME_WAS_LATE = 0,
    FK_DROP_OUT_OF_BUFFERS = 1,
    FK_DROP_DISCONTINUITY = 2,
    FK_DROP_CORRUPT = 3,
    FK_DROP_PHOTO_CAPTURE = 4,
    FK_DROP_PROCESSING_FAILED = 5,
    FK_DROP_REASON_COUNT = 6
};

/* ---- Library ---------------------------------------------------------------------------- */

int32_t fk_api_version(void);
/* FrameKit's version, e.g. "0.1.0" (static storage). */
const char *fk_version(void);
/* The drop reason's name as FrameKit's stats write it ("frame_was_late"…); NULL if out of range. */
const char *fk_drop_reason_name(int32_t reason);

/* ---- Frames ----------------------------------------------------------------------------- */

typedef struct fk_frame fk_frame;

typedef struct fk_plane {
    uint8_t *data;
    int64_t bytes_per_row;
    int32_t width; /* in pixels of the plane (chroma planes are smaller) */
    int32_t height;
    int32_t bytes_per_pixel;
} fk_plane;

typedef struct fk_frame_info {
    int32_t width;
    int32_t height;
    int32_t format; /* FK_FORMAT_* */
    int32_t plane_count;
    fk_plane planes[3];
    /* From a source: the frame's number (gaps are drops) and its time in seconds. */
    uint64_t sequence_number;
    double presentation_time;
} fk_frame_info;

/*
 * Wraps `width` x `height` pixels of a one-plane format (RGB24, BGRA32, GRAY8, YUYV) at `data`,
 * rows `bytes_per_row` apart, without copying them. The memory must stay valid and unchanged
 * until fk_frame_free(*out): FrameKit reads it during calls that take the frame and never
 * writes it. A tracker, which keeps frames between calls, copies each wrapped frame it is given.
 */
fk_status fk_frame_wrap(void *data, int32_t width, int32_t height, int64_t bytes_per_row, int32_t format,
                        fk_frame **out, fk_error *error);
/* A new frame owned by FrameKit, zeroed, tightly packed. */
fk_status fk_frame_new(int32_t width, int32_t height, int32_t format, fk_frame **out, fk_error *error);
/* The frame's size, format, planes (pointers valid until the frame is freed) and timing.
   Returns FK_ERR_INVALID_ARGUMENT for a NULL frame or info. */
fk_status fk_frame_get_info(const fk_frame *frame, fk_frame_info *info);
void fk_frame_free(fk_frame *frame);

/* ---- Pixels: conversion, resize, filters (each gives a new frame) ------------------------ */

fk_status fk_convert(const fk_frame *source, int32_t format, fk_frame **out, fk_error *error);
/* Bilinear; `width` and `height` in 1...16384, within the pixel budget above. */
fk_status fk_resize(const fk_frame *source, int32_t width, int32_t height, fk_frame **out, fk_error *error);
/* GRAY8 in, GRAY8 out; `kernel_size` 3 or 5 (OpenCV's fixed kernels for sigma 0). */
fk_status fk_gaussian_blur(const fk_frame *source, int32_t kernel_size, fk_frame **out, fk_error *error);
/* GRAY8 in, GRAY8 out: the Sobel gradient's magnitude, saturated. */
fk_status fk_sobel(const fk_frame *source, fk_frame **out, fk_error *error);

/* ---- Faces ------------------------------------------------------------------------------ */

typedef struct fk_face {
    /* The box, in the pixels of the frame it was found in. */
    double x;
    double y;
    double width;
    double height;
    double confidence; /* 0...1 */
    /* Right eye, left eye, nose tip, right and left mouth corner (as seen by the subject):
       x0, y0, x1, y1, ...; landmark_count is 5, or 0 when the detector gives none. */
    double landmarks[10];
    int32_t landmark_count;
    int32_t reserved;
} fk_face;

/* Frees what fk_detect and fk_track give out. */
void fk_faces_free(fk_face *faces);

typedef struct fk_detector fk_detector;

typedef struct fk_detector_options {
    int32_t input_size; /* the network's input, longest side: 32...4096 (default 640) */
    double score_threshold; /* 0...1 (default 0.3) */
    double overlap_threshold; /* (0, 1] (default 0.3) */
    int32_t min_face_size; /* in the image's pixels; 0: no limit */
    int32_t max_face_size; /* 0: no limit */
} fk_detector_options;

void fk_detector_options_init(fk_detector_options *options);
/* `model_path`: an ONNX file; NULL: centerface.onnx found along FrameKit's model search path
   (FRAMEKIT_MODELS first; Models/README.md). `options` NULL: the defaults. */
fk_status fk_detector_new(const char *model_path, const fk_detector_options *options, fk_detector **out,
                          fk_error *error);
/* The faces in `frame` (any format), strongest first: *faces (free with fk_faces_free; NULL
   when none) and *count. */
fk_status fk_detect(fk_detector *detector, const fk_frame *frame, fk_face **faces, size_t *count, fk_error *error);
/* As fk_detect, for a still picture: the whole frame, then overlapping tiles of it at its own
   scale (a few passes: a 1600x1200 photo, 7), so faces from ~20 px are found whatever the
   picture's size; what `framekit detect` does for a photo or a folder of them. */
fk_status fk_detect_full_resolution(fk_detector *detector, const fk_frame *frame, fk_face **faces, size_t *count,
                                    fk_error *error);
void fk_detector_free(fk_detector *detector);

typedef struct fk_tracker fk_tracker;

typedef struct fk_tracker_options {
    /* A detector pass every `pass_interval` frames (and on a frame where a face was lost);
       faces between passes are followed by patch tracking. 1...1000 (default 4). */
    int32_t pass_interval;
    /* While passes change nothing and the camera looks still, passes grow further apart up to
       this many frames. 1 (never) ...1000 (default 12). */
    int32_t quiet_interval;
} fk_tracker_options;

typedef struct fk_tracker_stats {
    int64_t frames;
    int64_t passes; /* detector runs */
} fk_tracker_stats;

void fk_tracker_options_init(fk_tracker_options *options);
/* The tracker keeps its own reference to `detector`: the detector may be freed first. */
fk_status fk_tracker_new(fk_detector *detector, const fk_tracker_options *options, fk_tracker **out, fk_error *error);
/* The faces in the next frame of a video, as fk_detect gives them. */
fk_status fk_track(fk_tracker *tracker, const fk_frame *frame, fk_face **faces, size_t *count, fk_error *error);
fk_status fk_tracker_get_stats(const fk_tracker *tracker, fk_tracker_stats *stats);
/* Forgets every face (a cut to another scene). */
void fk_tracker_reset(fk_tracker *tracker);
void fk_tracker_free(fk_tracker *tracker);

/* ---- Sources ---------------------------------------------------------------------------- */

typedef struct fk_source fk_source;

typedef struct fk_source_options {
    /* 0: a file is read as fast as the caller takes frames, nothing dropped but damaged
       frames; 1: at its frame rate, frames the caller is too slow for dropped as late (as a
       camera's are). Cameras and live streams are always real time. */
    int32_t realtime;
    /* The format frames are delivered in: FK_FORMAT_RGB24 (default), BGRA32 or GRAY8. */
    int32_t format;
    /* A live stream: reconnection attempts when it drops, 0...1000 (default 5). */
    int32_t reconnect_attempts;
} fk_source_options;

typedef struct fk_source_counts {
    int64_t captured;
    int64_t delivered;
    int64_t pending;
    int64_t dropped[FK_DROP_REASON_COUNT]; /* by FK_DROP_* */
} fk_source_counts;

void fk_source_options_init(fk_source_options *options);
/*
 * Opens `source` and starts reading: a video file, an image or a folder of images, a stream URL
 * (rtsp://, tcp://, udp://, http(s)://, srt://), a V4L2 node (/dev/video0), or "virtual" (the
 * built-in virtual camera).
 */
fk_status fk_source_open(const char *source, const fk_source_options *options, fk_source **out, fk_error *error);
/* Waits for the next frame (free it with fk_frame_free; it may be kept as long as wanted).
   FK_END when the source has ended or was stopped. A call while another thread is in this one
   for the same source is FK_ERR_INVALID_ARGUMENT. A camera that stops sending without an error
   keeps it waiting: fk_source_stop from another thread ends the wait. */
fk_status fk_source_next(fk_source *source, fk_frame **frame, fk_error *error);
fk_status fk_source_get_counts(const fk_source *source, fk_source_counts *counts);
/* Stops reading; the handle stays valid: a fk_source_next waiting in another thread returns
   FK_END, as every later one does. The one call that may come from another thread. */
void fk_source_stop(fk_source *source);
/* Stops reading and frees the source (frames already taken stay valid). Not while another
   thread is in fk_source_next: fk_source_stop, wait for that call to return, then close. */
void fk_source_close(fk_source *source);

#ifdef __cplusplus
}
#endif

#endif /* FRAMEKIT_H */
