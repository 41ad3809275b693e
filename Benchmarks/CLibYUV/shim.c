// CLibYUV has no code of its own: it exposes libyuv.h to Swift.
