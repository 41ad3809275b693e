// The header's declarations are FrameKitC's (Swift, @_cdecl): this target only carries
// framekit.h to the Swift module that implements it and to programs that call it.
#include "framekit.h"
