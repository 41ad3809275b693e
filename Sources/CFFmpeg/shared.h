// CFFmpeg's internal helpers (not part of include/CFFmpeg.h: Swift does not see them).
#ifndef CFFMPEG_SHARED_H
#define CFFMPEG_SHARED_H

#include <stddef.h>

/// Silences FFmpeg's own logging (for the whole process).
void cffm_internal_quiet(void);
/// `what: <libav's text for error>` into message.
void cffm_internal_describe(int error, const char *what, char *message, size_t size);
/// `text` into message.
void cffm_internal_say(const char *text, char *message, size_t size);

#endif
