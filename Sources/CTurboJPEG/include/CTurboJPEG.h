// CTurboJPEG: libjpeg-turbo's TurboJPEG API, imported as it is, plus the few macros Swift
// cannot see. Symbols of our own are prefixed `ctj_`.
#ifndef CTURBOJPEG_H
#define CTURBOJPEG_H
#include <turbojpeg.h>

static const int ctj_FLAG_ACCURATEDCT = TJFLAG_ACCURATEDCT;
static const int ctj_FLAG_STOPONWARNING = TJFLAG_STOPONWARNING;
static const int ctj_FLAG_NOREALLOC = TJFLAG_NOREALLOC;

#endif
