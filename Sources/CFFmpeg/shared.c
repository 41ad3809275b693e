// CFFmpeg's helpers shared by the reader (reader.c) and the writers (writer.c).
#include "shared.h"

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
