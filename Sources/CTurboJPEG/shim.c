// SwiftPM needs a source file in every C target; the API is libturbojpeg's own.
#include "CTurboJPEG.h"
