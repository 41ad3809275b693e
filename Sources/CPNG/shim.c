#include "CPNG.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void say(char *message, size_t size, const char *text) {
    if (message && size > 0) snprintf(message, size, "%s", text);
}

static png_uint_32 format_of(cpng_layout layout) {
    switch (layout) {
    case CPNG_GRAY: return PNG_FORMAT_GRAY;
    case CPNG_RGB: return PNG_FORMAT_RGB;
    case CPNG_BGRA: return PNG_FORMAT_BGRA;
    }
    return PNG_FORMAT_RGB;
}

int cpng_header(const uint8_t *data, size_t size, int32_t *width, int32_t *height, int32_t *is_color, char *message,
                size_t message_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&image, data, size)) {
        say(message, message_size, image.message);
        png_image_free(&image);
        return 0;
    }
    *width = (int32_t)image.width;
    *height = (int32_t)image.height;
    *is_color = (image.format & PNG_FORMAT_FLAG_COLOR) != 0;
    png_image_free(&image);
    return 1;
}

/// The bytes libpng reads from, and where an error's message goes before the jump back.
typedef struct {
    const uint8_t *data;
    size_t size;
    size_t position;
    char message[256];
} decode_context;

static void read_bytes(png_structp png, png_bytep out, size_t count) {
    decode_context *c = png_get_io_ptr(png);
    if (count > c->size - c->position) png_error(png, "the PNG is cut short");
    memcpy(out, c->data + c->position, count);
    c->position += count;
}

// libpng's errors end in a longjmp to the setjmp in cpng_decode, inside this C function: it
// never crosses a Swift frame.
static void on_error(png_structp png, png_const_charp text) {
    decode_context *c = png_get_error_ptr(png);
    snprintf(c->message, sizeof c->message, "%s", text);
    png_longjmp(png, 1);
}

// Warnings (an sRGB profile libpng knows to be off, common in real photos) leave the pixels whole.
static void on_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

int cpng_decode(const uint8_t *data, size_t size, cpng_layout layout, int32_t width, int32_t height, uint8_t *out,
                int32_t stride, char *message, size_t message_size) {
    if (layout == CPNG_BGRA) {
        say(message, message_size, "PNGs decode to gray or RGB");
        return 0;
    }
    // On the heap: libpng's callbacks write it after the setjmp below, and only memory the
    // jump cannot take back keeps what they wrote (a local would need to be volatile, which
    // libpng's void * parameters cannot carry).
    decode_context *context = calloc(1, sizeof *context);
    png_structp png = context ? png_create_read_struct(PNG_LIBPNG_VER_STRING, context, on_error, on_warning) : NULL;
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!png || !info) {
        png_destroy_read_struct(&png, &info, NULL);
        free(context);
        say(message, message_size, "out of memory");
        return 0;
    }
    context->data = data;
    context->size = size;
    // Written before the jump may happen, read after it: volatile.
    uint8_t *volatile scratch = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        free(scratch);
        free(rows);
        png_destroy_read_struct(&png, &info, NULL);
        say(message, message_size, context->message[0] ? context->message : "libpng failed");
        free(context);
        return 0;
    }
    png_set_read_fn(png, context, read_bytes);
    png_read_info(png, info);
    if ((int32_t)png_get_image_width(png, info) != width || (int32_t)png_get_image_height(png, info) != height) {
        png_error(png, "the image's size is not the one given");
    }
    int color = (png_get_color_type(png, info) & PNG_COLOR_MASK_COLOR) != 0;
    // Palettes to RGB, gray below 8 bits to 8, a tRNS chunk to alpha; 16 bits scaled (rounded)
    // to 8, as OpenCV and FFmpeg read them, with no gamma applied.
    png_set_expand(png);
    png_set_scale_16(png);
    if (layout == CPNG_RGB && !color) png_set_gray_to_rgb(png);
    if (layout == CPNG_GRAY && color) png_set_rgb_to_gray_fixed(png, 1, -1, -1);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    int wanted = layout == CPNG_GRAY ? 1 : 3;
    int alpha = channels == wanted + 1;
    if (channels != wanted && !alpha) png_error(png, "unexpected channel count after expansion");
    size_t row_bytes = png_get_rowbytes(png, info);
    rows = malloc(sizeof(png_bytep) * (size_t)height);
    if (!rows) png_error(png, "out of memory");
    if (alpha) {
        // With alpha, all rows first (interlaced images fill them over seven passes), then each
        // pixel composited onto white.
        scratch = malloc(row_bytes * (size_t)height);
        if (!scratch) png_error(png, "out of memory");
        for (int32_t y = 0; y < height; y++) rows[y] = scratch + row_bytes * (size_t)y;
    } else {
        for (int32_t y = 0; y < height; y++) rows[y] = out + (size_t)stride * (size_t)y;
    }
    // Every row is read here; the chunks after them (and a damaged IEND) are not needed.
    png_read_image(png, rows);
    if (alpha) {
        for (int32_t y = 0; y < height; y++) {
            const uint8_t *src = rows[y];
            uint8_t *dst = out + (size_t)stride * (size_t)y;
            for (int32_t x = 0; x < width; x++) {
                unsigned a = src[wanted];
                for (int k = 0; k < wanted; k++) dst[k] = (uint8_t)((src[k] * a + 255u * (255u - a) + 127u) / 255u);
                src += channels;
                dst += wanted;
            }
        }
    }
    free(scratch);
    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    free(context);
    return 1;
}

int cpng_encode(const uint8_t *pixels, int32_t width, int32_t height, int32_t stride, cpng_layout layout, uint8_t **out,
                size_t *out_size, char *message, size_t message_size) {
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = format_of(layout);
    png_alloc_size_t bytes = 0;
    // The size first (no memory given), then the bytes.
    if (!png_image_write_to_memory(&image, NULL, &bytes, 0, pixels, stride, NULL) || bytes == 0) {
        say(message, message_size, image.message[0] ? image.message : "libpng could not size the PNG");
        return 0;
    }
    uint8_t *buffer = malloc(bytes);
    if (!buffer) {
        say(message, message_size, "out of memory");
        return 0;
    }
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = format_of(layout);
    if (!png_image_write_to_memory(&image, buffer, &bytes, 0, pixels, stride, NULL)) {
        say(message, message_size, image.message);
        free(buffer);
        return 0;
    }
    *out = buffer;
    *out_size = bytes;
    return 1;
}

void cpng_free(uint8_t *data) { free(data); }
