// CFFmpeg's internal helpers (not part of include/CFFmpeg.h: Swift does not see them).
#ifndef CFFMPEG_SHARED_H
#define CFFMPEG_SHARED_H

#include <stddef.h>

#include "CFFmpeg.h"
#include <libavutil/pixfmt.h>

/// Silences FFmpeg's own logging (for the whole process).
void cffm_internal_quiet(void);
/// `what: <libav's text for error>` into message.
void cffm_internal_describe(int error, const char *what, char *message, size_t size);
/// `text` into message.
void cffm_internal_say(const char *text, char *message, size_t size);
struct AVCodecContext;
struct AVStream;
struct AVFrame;
/// After the encoder opened: its parameters onto the muxer's stream, and the encoder's input
/// frame allocated at its size in yuv420p. Negative on failure (out of memory).
int cffm_internal_connect_encoder(struct AVCodecContext *codec, struct AVStream *stream, struct AVFrame *frame);

/// FFmpeg's pixel format for a frame to encode.
enum AVPixelFormat cffm_internal_input_format(cffm_input_layout layout);

#endif
