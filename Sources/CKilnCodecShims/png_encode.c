/* PNG encoding (and iCCP reading) with libpng's low-level API; see include/kiln_png.h. */
#include "kiln_png.h"
#include <libdeflate.h>
#include <png.h>
#include <stdint.h>
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

/* Makes room for `length` more bytes in `sink`; 0 when it cannot. */
static int kiln_png_reserve(kiln_png_sink *sink, size_t length) {
    if (length <= sink->capacity - sink->size) return 1;
    size_t capacity = sink->capacity > 0 ? sink->capacity : 65536;
    while (length > capacity - sink->size) {
        if (capacity > ((size_t)-1) / 2) return 0;
        capacity *= 2;
    }
    unsigned char *grown = realloc(sink->data, capacity);
    if (grown == NULL) return 0;
    sink->data = grown;
    sink->capacity = capacity;
    return 1;
}

static void kiln_png_write(png_structp png, png_bytep bytes, size_t length) {
    kiln_png_sink *sink = (kiln_png_sink *)png_get_io_ptr(png);
    if (!kiln_png_reserve(sink, length)) png_error(png, "out of memory for PNG output");
    memcpy(sink->data + sink->size, bytes, length);
    sink->size += length;
}

static void kiln_png_flush(png_structp png) { (void)png; }

/* ---- Non-interlaced image data: row filters here, DEFLATE by libdeflate (issue 15) ----------
 * libpng's writer runs zlib's deflate over the rows it filters itself; on the op3 output (400×225
 * RGBA) that was 30 ms at level 6 with the UP filter. Here the rows are filtered into one buffer,
 * compressed with one libdeflate_zlib_compress call straight into the output as a single IDAT;
 * libpng still writes the signature, IHDR and the metadata chunks (png_write_info), and the
 * encoder writes IEND. See PNGEncoder.swift for the measurements behind
 * the default filter and level. */

static int kiln_png_paeth(int a, int b, int c) {
    int p = b - c, q = a - c;
    int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

/* Writes row `row` (n bytes, bpp bytes per pixel) filtered with `type` (0...4) to out[0...n-1];
 * `prev` is the row above or NULL for the first row (taken as zeros). Returns libpng's heuristic
 * cost: the sum of the filtered bytes taken as signed, |v| (the "minimum sum of absolute
 * differences" of the PNG specification's section 12.8). One loop per filter type, the first
 * pixel apart, so the compiler vectorises None/Sub/Up/Average. */
#define KILN_COST(v) ((v) < 128 ? (unsigned long)(v) : 256ul - (v))
static unsigned long kiln_png_filter_row(int type, const unsigned char *row, const unsigned char *prev,
                                         size_t n, size_t bpp, unsigned char *out) {
    unsigned long sum = 0;
    size_t i, first = bpp < n ? bpp : n;
    if (prev == NULL) {
        /* The first row: Up is None, Average is half of Sub, Paeth is Sub. */
        for (i = 0; i < first; i++) { out[i] = row[i]; sum += KILN_COST(row[i]); }
        switch (type) {
        case 1: case 4: for (; i < n; i++) { unsigned char v = row[i] - row[i - bpp]; out[i] = v; sum += KILN_COST(v); } break;
        case 3: for (; i < n; i++) { unsigned char v = row[i] - (row[i - bpp] >> 1); out[i] = v; sum += KILN_COST(v); } break;
        default: for (; i < n; i++) { unsigned char v = row[i]; out[i] = v; sum += KILN_COST(v); } break;
        }
        return sum;
    }
    switch (type) {
    case 0:
        for (i = 0; i < n; i++) { unsigned char v = row[i]; out[i] = v; sum += KILN_COST(v); }
        break;
    case 1:
        for (i = 0; i < first; i++) { unsigned char v = row[i]; out[i] = v; sum += KILN_COST(v); }
        for (; i < n; i++) { unsigned char v = row[i] - row[i - bpp]; out[i] = v; sum += KILN_COST(v); }
        break;
    case 2:
        for (i = 0; i < n; i++) { unsigned char v = row[i] - prev[i]; out[i] = v; sum += KILN_COST(v); }
        break;
    case 3:
        for (i = 0; i < first; i++) { unsigned char v = row[i] - (prev[i] >> 1); out[i] = v; sum += KILN_COST(v); }
        for (; i < n; i++) {
            unsigned char v = row[i] - (unsigned char)(((unsigned)row[i - bpp] + prev[i]) >> 1);
            out[i] = v;
            sum += KILN_COST(v);
        }
        break;
    default:
        for (i = 0; i < first; i++) { unsigned char v = row[i] - prev[i]; out[i] = v; sum += KILN_COST(v); }
        for (; i < n; i++) {
            unsigned char v = row[i] - (unsigned char)kiln_png_paeth(row[i - bpp], prev[i], prev[i - bpp]);
            out[i] = v;
            sum += KILN_COST(v);
        }
        break;
    }
    return sum;
}

/* The filtered image: per row one filter byte and the filtered bytes. With one filter bit every
 * row uses it; with several, each row gets the allowed filter of least cost (libpng's rule). */
static unsigned char *kiln_png_filter_image(const unsigned char *pixels, unsigned int width, unsigned int height,
                                            int channels, size_t stride, int filters, size_t *size) {
    size_t n = (size_t)width * channels;
    unsigned char *filtered = malloc((n + 1) * height);
    unsigned char *trial = malloc(n);
    if (filtered == NULL || trial == NULL) {
        free(filtered);
        free(trial);
        return NULL;
    }
    static const int bits[5] = { KILN_PNG_FILTER_NONE, KILN_PNG_FILTER_SUB, KILN_PNG_FILTER_UP,
                                 KILN_PNG_FILTER_AVG, KILN_PNG_FILTER_PAETH };
    int allowed = 0, only = 0;
    for (int t = 0; t < 5; t++) if (filters & bits[t]) { allowed++; only = t; }
    if (allowed == 0) { allowed = 1; only = 0; }
    for (unsigned int y = 0; y < height; y++) {
        const unsigned char *row = pixels + (size_t)y * stride;
        const unsigned char *prev = y > 0 ? row - stride : NULL;
        unsigned char *out = filtered + (size_t)y * (n + 1);
        if (allowed == 1) {
            out[0] = (unsigned char)only;
            kiln_png_filter_row(only, row, prev, n, (size_t)channels, out + 1);
            continue;
        }
        unsigned long best = (unsigned long)-1;
        for (int t = 0; t < 5; t++) {
            if (!(filters & bits[t])) continue;
            unsigned long cost = kiln_png_filter_row(t, row, prev, n, (size_t)channels, trial);
            if (cost < best) {
                best = cost;
                out[0] = (unsigned char)t;
                memcpy(out + 1, trial, n);
            }
        }
    }
    free(trial);
    *size = (n + 1) * height;
    return filtered;
}

static void kiln_png_be32(unsigned char *at, size_t value) {
    at[0] = (unsigned char)(value >> 24);
    at[1] = (unsigned char)(value >> 16);
    at[2] = (unsigned char)(value >> 8);
    at[3] = (unsigned char)value;
}

/* Filters and compresses the image straight into `sink` as one IDAT chunk (length, type, data,
 * CRC-32 by libdeflate), then appends IEND; libpng has written everything before them through
 * the same sink. Compressing in place saves a copy, and the filtered rows are the only other
 * image-sized buffer. Calls png_error (longjmp) on failure, after freeing its own buffers. */
static void kiln_png_write_deflated(png_structp png, kiln_png_sink *sink, const unsigned char *pixels,
                                    unsigned int width, unsigned int height, int channels, size_t stride,
                                    int level, int filters) {
    static const unsigned char iend[12] = { 0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xAE, 0x42, 0x60, 0x82 };
    size_t filtered_size = 0;
    unsigned char *filtered = kiln_png_filter_image(pixels, width, height, channels, stride, filters, &filtered_size);
    if (filtered == NULL) png_error(png, "out of memory for PNG filtering");
    struct libdeflate_compressor *compressor = libdeflate_alloc_compressor(level < 0 ? 0 : (level > 12 ? 12 : level));
    if (compressor == NULL) {
        free(filtered);
        png_error(png, "out of memory for PNG compression");
    }
    size_t bound = libdeflate_zlib_compress_bound(compressor, filtered_size);
    size_t compressed_size = 0;
    if (bound <= ((size_t)-1) - 64 && kiln_png_reserve(sink, 8 + bound + 4 + sizeof iend)) {
        compressed_size = libdeflate_zlib_compress(compressor, filtered, filtered_size, sink->data + sink->size + 8, bound);
    }
    libdeflate_free_compressor(compressor);
    free(filtered);
    if (compressed_size == 0 || compressed_size > PNG_UINT_31_MAX) png_error(png, "PNG compression failed");
    unsigned char *chunk = sink->data + sink->size;
    kiln_png_be32(chunk, compressed_size);
    memcpy(chunk + 4, "IDAT", 4);
    kiln_png_be32(chunk + 8 + compressed_size, libdeflate_crc32(0, chunk + 4, 4 + compressed_size));
    memcpy(chunk + 12 + compressed_size, iend, sizeof iend);
    sink->size += 12 + compressed_size + sizeof iend;
}

int kiln_png_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int channels,
                    size_t stride, int level, int interlace, int filters, int deflate_level,
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
    if (interlace) {
        png_write_image(png, rows);
        png_write_end(png, info);
    } else {
        kiln_png_write_deflated(png, sink, pixels, width, height, channels, stride, deflate_level, filters);
    }

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
