// CFFmpeg's helpers shared by the reader (reader.c) and the encoders (writer.c, live.c).
#include "shared.h"

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/error.h>
#include <libavutil/log.h>
#include <stdio.h>

// FFmpeg logs to stderr by default; FrameKit reports through its own errors instead. Set at
// every open, not once: another user of the same libavutil in the process (OpenCV's videoio,
// in the tests) may raise the level after FrameKit first lowered it.
void cffm_internal_quiet(void) { av_log_set_level(AV_LOG_QUIET); }

void cffm_internal_describe(int error, const char *what, char *message, size_t size) {
    if (!message || size == 0) return;
    char text[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(error, text, sizeof text);
    snprintf(message, size, "%s: %s", what, text);
}

void cffm_internal_say(const char *text, char *message, size_t size) {
    if (message && size > 0) snprintf(message, size, "%s", text);
}

enum AVPixelFormat cffm_internal_input_format(cffm_input_layout layout) {
    switch (layout) {
    case CFFM_INPUT_I420: return AV_PIX_FMT_YUV420P;
    case CFFM_INPUT_NV12: return AV_PIX_FMT_NV12;
    case CFFM_INPUT_GRAY8: return AV_PIX_FMT_GRAY8;
    case CFFM_INPUT_YUYV: return AV_PIX_FMT_YUYV422;
    case CFFM_INPUT_BGRA: return AV_PIX_FMT_BGRA;
    case CFFM_INPUT_RGB24: return AV_PIX_FMT_RGB24;
    }
    return AV_PIX_FMT_NONE;
}

int cffm_internal_connect_encoder(AVCodecContext *codec, AVStream *stream, AVFrame *frame) {
    int error = avcodec_parameters_from_context(stream->codecpar, codec);
    if (error < 0) return error;
    stream->time_base = codec->time_base;
    frame->format = AV_PIX_FMT_YUV420P;
    frame->width = codec->width;
    frame->height = codec->height;
    return av_frame_get_buffer(frame, 32);
}
