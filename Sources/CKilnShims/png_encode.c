/* PNG encoding (and iCCP reading) with libpng's low-level API; see include/kiln_png.h. */
#include "kiln_png.h"
#include <png.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *message;
    size_t message_size;
} kiln_png_errors;

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
} kiln_png_sink;

typedef struct {
    const unsigned char *data;
    size_t size;
    size_t offset;
} kiln_png_source;

static void kiln_png_error(png_structp png, png_const_charp text) {
    kiln_png_errors *errors = (kiln_png_errors *)png_get_error_ptr(png);
    if (errors != NULL && errors->message != NULL && errors->message_size > 0) {
        strncpy(errors->message, text != NULL ? text : "libpng error", errors->message_size - 1);
        errors->message[errors->message_size - 1] = '\0';
    }
    png_longjmp(png, 1);
}

static void kiln_png_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void kiln_png_write(png_structp png, png_bytep bytes, size_t length) {
    kiln_png_sink *sink = (kiln_png_sink *)png_get_io_ptr(png);
    if (length > sink->capacity - sink->size) {
        size_t capacity = sink->capacity > 0 ? sink->capacity : 65536;
        while (length > capacity - sink->size) {
            if (capacity > ((size_t)-1) / 2) png_error(png, "PNG output too large");
            capacity *= 2;
        }
        unsigned char *grown = realloc(sink->data, capacity);
        if (grown == NULL) png_error(png, "out of memory for PNG output");
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size += length;
}

static void kiln_png_flush(png_structp png) { (void)png; }

int kiln_png_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int channels,
                    size_t stride, int level, int interlace, int filters,
                    const unsigned char *icc, size_t icc_size,
                    const unsigned char *exif, size_t exif_size,
                    const unsigned char *xmp, size_t xmp_size,
                    unsigned char **out, size_t *out_size, char *message, size_t message_size) {
    kiln_png_errors errors = { message, message_size };
    kiln_png_sink *sink = NULL;   /* on the heap: it changes between setjmp and a longjmp */
    char *xmp_text = NULL;        /* NUL-terminated copy: libpng measures iTXt text with strlen */
    png_bytep *rows = NULL;
    png_structp png = NULL;
    png_infop info = NULL;
    if (message != NULL && message_size > 0) message[0] = '\0';
    *out = NULL;
    *out_size = 0;
    if ((channels != 3 && channels != 4) || width == 0 || height == 0 || stride < (size_t)width * channels) {
        if (message != NULL && message_size > 0) strncpy(message, "invalid PNG encode arguments", message_size - 1);
        return -1;
    }
    rows = malloc(sizeof(png_bytep) * height);
    sink = calloc(1, sizeof(kiln_png_sink));
    if (xmp != NULL && xmp_size > 0 && memchr(xmp, 0, xmp_size) == NULL) {
        xmp_text = malloc(xmp_size + 1);
        if (xmp_text != NULL) {
            memcpy(xmp_text, xmp, xmp_size);
            xmp_text[xmp_size] = '\0';
        }
    }
    png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &errors, kiln_png_error, kiln_png_warning);
    if (png != NULL) info = png_create_info_struct(png);
    if (rows == NULL || sink == NULL || png == NULL || info == NULL) {
        if (message != NULL && message_size > 0) strncpy(message, "out of memory", message_size - 1);
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(sink);
        free(xmp_text);
        return -1;
    }
    /* Half the raw size: most images compress below it, so one realloc at most. */
    sink->capacity = (size_t)width * height * channels / 2 + 1024;
    sink->data = malloc(sink->capacity);
    if (sink->data == NULL) sink->capacity = 0;

    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        free(rows);
        free(sink->data);
        free(sink);
        free(xmp_text);
        return -1;
    }
    png_set_benign_errors(png, 1);
    png_set_write_fn(png, sink, kiln_png_write, kiln_png_flush);
    png_set_compression_level(png, level < 0 ? 0 : (level > 9 ? 9 : level));
    png_set_filter(png, PNG_FILTER_TYPE_BASE, filters & PNG_ALL_FILTERS ? (filters & PNG_ALL_FILTERS) : PNG_FILTER_NONE);
    png_set_IHDR(png, info, width, height, 8, channels == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    if (icc != NULL && icc_size > 0 && icc_size <= 0xFFFFFFFFu) {
        png_set_iCCP(png, info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, icc, (png_uint_32)icc_size);
    }
    if (exif != NULL && exif_size > 0 && exif_size <= 0x7FFFFFFFu) {
        png_set_eXIf_1(png, info, (png_uint_32)exif_size, (png_bytep)exif);
    }
    if (xmp_text != NULL) {
        png_text text;
        memset(&text, 0, sizeof(text));
        text.compression = PNG_ITXT_COMPRESSION_NONE;
        text.key = (png_charp)"XML:com.adobe.xmp";
        text.text = xmp_text;
        text.itxt_length = xmp_size;
        png_set_text(png, info, &text, 1);
    }
    for (unsigned int y = 0; y < height; y++) rows[y] = (png_bytep)(pixels + (size_t)y * stride);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, info);

    png_destroy_write_struct(&png, &info);
    free(rows);
    free(xmp_text);
    *out = sink->data;
    *out_size = sink->size;
    free(sink);
    return 0;
}

static void kiln_png_read(png_structp png, png_bytep bytes, size_t length) {
    kiln_png_source *source = (kiln_png_source *)png_get_io_ptr(png);
    if (length > source->size - source->offset) png_error(png, "read past end of data (truncated)");
    memcpy(bytes, source->data + source->offset, length);
    source->offset += length;
}

int kiln_png_read_icc(const unsigned char *data, size_t size,
                      unsigned char **out, size_t *out_size, char *message, size_t message_size) {
    kiln_png_errors errors = { message, message_size };
    kiln_png_source source = { data, size, 0 };
    png_structp png = NULL;
    png_infop info = NULL;
    if (message != NULL && message_size > 0) message[0] = '\0';
    *out = NULL;
    *out_size = 0;
    png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &errors, kiln_png_error, kiln_png_warning);
    if (png != NULL) info = png_create_info_struct(png);
    if (png == NULL || info == NULL) {
        if (message != NULL && message_size > 0) strncpy(message, "out of memory", message_size - 1);
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        return -1;
    }
    png_set_benign_errors(png, 1);
    png_set_read_fn(png, &source, kiln_png_read);
    png_read_info(png, info);   /* stops at the first IDAT: no pixel data is read */

    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 length = 0;
    int found = 0;
    if (png_get_iCCP(png, info, &name, &compression, &profile, &length) != 0 && profile != NULL && length > 0) {
        unsigned char *copy = malloc(length);
        if (copy != NULL) {
            memcpy(copy, profile, length);
            *out = copy;
            *out_size = length;
            found = 1;
        }
    }
    png_destroy_read_struct(&png, &info, NULL);
    return found;
}

void kiln_png_free(unsigned char *buffer) { free(buffer); }
