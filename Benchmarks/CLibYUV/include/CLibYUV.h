// CLibYUV: Chrome's and WebRTC's converter (Debian's libyuv-dev), linked only by the benchmark
// as a same-run baseline beside OpenCV, never by the product.
#ifndef CLIBYUV_H
#define CLIBYUV_H
#include <libyuv.h>
#endif
