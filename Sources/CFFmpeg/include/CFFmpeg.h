// CFFmpeg: video files and network streams through libavformat + libavcodec, behind a small C
// interface: an opaque handle, plain structs, status codes and a message buffer. FFmpeg's own
// structs and macros never reach Swift. Every symbol is prefixed `cffm_`.
#ifndef CFFMPEG_H
#define CFFMPEG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cffm_media cffm_media;

typedef enum {
    CFFM_OK = 0,
    /// The input has no more frames.
    CFFM_END = 1,
    /// A packet or frame could not be decoded; the next call goes on with the next one.
    CFFM_CORRUPT = 2,
    /// A read was interrupted (stop requested or the read timeout passed).
    CFFM_INTERRUPTED = 3,
    /// Opening or reading failed; `message` says why.
    CFFM_ERROR = -1,
} cffm_status;

/// How a decoded frame's planes are laid out (FrameKit's formats): 8-bit always; anything the
/// decoder gives in another layout (10-bit, 4:2:2, 4:4:4, RGB) is converted to I420.
typedef enum {
    CFFM_LAYOUT_I420 = 0,
    CFFM_LAYOUT_NV12 = 1,
    CFFM_LAYOUT_GRAY8 = 2,
} cffm_layout;

typedef struct {
    int32_t width;
    int32_t height;
    /// Frames per second (the stream's average or guessed rate; 0 if unknown).
    double frame_rate;
    /// Seconds, or 0 when unknown (live streams).
    double duration;
    cffm_layout layout;
    /// The decoder's name ("h264", "hevc", "vp9"…) and the container's ("mov,mp4,…").
    char codec[32];
    char container[64];
} cffm_info;

typedef struct {
    /// Valid until the next `cffm_next` or `cffm_close`.
    const uint8_t *planes[3];
    int32_t strides[3];
    int32_t width;
    int32_t height;
    cffm_layout layout;
    /// Seconds on the media timeline (the frame's best-effort timestamp), and whether the
    /// decoder marked it damaged.
    double time;
    int32_t damaged;
} cffm_frame;

/// Opens `url` (a path or rtsp://, tcp://, udp://, http(s)://, srt://…) and its best video
/// stream. `threads`: decoder threads (1…16). `timeout_seconds`: how long one open or read may
/// block (network inputs) before it fails as CFFM_INTERRUPTED.
cffm_status cffm_open(const char *url, int32_t threads, double timeout_seconds, cffm_media **out, cffm_info *info,
                      char *message, size_t message_size);

/// Decodes the next frame into `frame`.
cffm_status cffm_next(cffm_media *media, cffm_frame *frame, char *message, size_t message_size);

/// Seeks to the key frame at or before `seconds` (files); frames before `seconds` are then
/// skipped by the caller.
cffm_status cffm_seek(cffm_media *media, double seconds, char *message, size_t message_size);

/// Makes a blocking read return CFFM_INTERRUPTED soon (any thread may call it).
void cffm_interrupt(cffm_media *media);

void cffm_close(cffm_media *media);

/// Whether the linked libavformat can open this URL scheme ("rtsp", "srt", "file"…).
int32_t cffm_has_protocol(const char *scheme);

#ifdef __cplusplus
}
#endif

#endif
