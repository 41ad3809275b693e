// CPNG: PNG files through libpng: the header and encoding by its simplified API (png_image),
// decoding by its full API with libpng's error jumps kept inside the shim's own functions.
// Errors come back as return values and messages, never a longjmp into Swift. Symbols of our own
// are prefixed `cpng_`.
#ifndef CPNG_H
#define CPNG_H
#include <stddef.h>
#include <stdint.h>

/// The pixel layouts read and written: 8 bits a channel, sRGB.
typedef enum {
    CPNG_GRAY = 0,
    CPNG_RGB = 1,
    CPNG_BGRA = 2,
} cpng_layout;

/// Reads the header of the PNG in `data`: its size and whether it has colour. 1 on success; 0
/// with `message` (NUL-terminated, at most `message_size` bytes) otherwise.
int cpng_header(const uint8_t *data, size_t size, int32_t *width, int32_t *height, int32_t *is_color, char *message,
                size_t message_size);

/// Decodes the PNG in `data` into `out` as `layout`, gray or RGB (`stride` bytes a row, rows
/// top first): palette and sub-byte images expanded, 16-bit scaled to 8 with no gamma applied
/// (as OpenCV and FFmpeg read them), alpha composited onto white. `width` and `height` must be
/// the header's. 1 on success; 0 with `message`.
int cpng_decode(const uint8_t *data, size_t size, cpng_layout layout, int32_t width, int32_t height, uint8_t *out,
                int32_t stride, char *message, size_t message_size);

/// Encodes `pixels` (`layout`, `stride` bytes a row) as a PNG in a buffer of its own: `*out`
/// (free it with `cpng_free`) of `*out_size` bytes. 1 on success; 0 with `message`.
int cpng_encode(const uint8_t *pixels, int32_t width, int32_t height, int32_t stride, cpng_layout layout, uint8_t **out,
                size_t *out_size, char *message, size_t message_size);

void cpng_free(uint8_t *data);

#endif
