#ifndef KILN_PNG_H
#define KILN_PNG_H
/* libpng's low-level API behind fixed-arity functions: setjmp/longjmp error handling stays in C. */

#include <stddef.h>

/* Row filter choices, the same bits as libpng's PNG_FILTER_* (png_set_filter). */
enum {
    KILN_PNG_FILTER_NONE = 0x08,
    KILN_PNG_FILTER_SUB = 0x10,
    KILN_PNG_FILTER_UP = 0x20,
    KILN_PNG_FILTER_AVG = 0x40,
    KILN_PNG_FILTER_PAETH = 0x80,
    KILN_PNG_FILTER_ALL = 0xF8
};

/* Encodes 8-bit RGB (channels 3) or RGBA (channels 4) rows, `stride` bytes apart, to PNG.
 * interlace: nonzero for Adam7 (libpng and zlib at `level` 0...9, libpng's filters);
 * otherwise the rows are filtered here and compressed by libdeflate at `deflate_level` 0...12
 * (one IDAT). filters: KILN_PNG_FILTER_* bits: one bit filters every row the same way, several
 * let each row take the allowed filter with the least sum of absolute differences (libpng's rule);
 * icc/icc_size: optional profile for an iCCP chunk (NULL/0 for none; an invalid profile is dropped).
 * exif/exif_size: optional TIFF bytes for an eXIf chunk; xmp/xmp_size: optional XMP packet for an
 * uncompressed iTXt chunk "XML:com.adobe.xmp" (NULL/0 for none). Both are written before IDAT.
 * On success returns 0 and sets *out (free with kiln_png_free) and *out_size.
 * On failure returns -1 and writes libpng's message (NUL-terminated) into message[message_size]. */
int kiln_png_encode(const unsigned char *pixels, unsigned int width, unsigned int height, int channels,
                    size_t stride, int level, int interlace, int filters, int deflate_level,
                    const unsigned char *icc, size_t icc_size,
                    const unsigned char *exif, size_t exif_size,
                    const unsigned char *xmp, size_t xmp_size,
                    unsigned char **out, size_t *out_size, char *message, size_t message_size);

/* Reads the chunks before the image data and returns a copy of the iCCP profile.
 * Returns 1 with *out (free with kiln_png_free) and *out_size set when a valid profile is present,
 * 0 when there is none (or libpng dropped it as invalid), -1 on a read error (message filled). */
int kiln_png_read_icc(const unsigned char *data, size_t size,
                      unsigned char **out, size_t *out_size, char *message, size_t message_size);

/* Frees a buffer returned by kiln_png_encode or kiln_png_read_icc. */
void kiln_png_free(unsigned char *buffer);

/* Row-by-row decoding (png_rows.c) of the PNGs whose rows the simplified API would return
 * unchanged: non-interlaced, at most 8 bits per sample, sRGB-encoded (no gAMA, or an sRGB one).
 * kiln_png_rows_open returns 1 with *out, the size and 3 (RGB) or 4 (RGBA, also for tRNS)
 * channels set; 0 when the file is not eligible (decode it whole); -1 on a read error (message
 * filled). `data` must stay valid until kiln_png_rows_close. kiln_png_rows_read writes the next
 * row of width * channels bytes; -1 on error (kiln_png_rows_message says why). */
typedef struct kiln_png_rows kiln_png_rows;
int kiln_png_rows_open(const unsigned char *data, size_t size, kiln_png_rows **out,
                       unsigned int *width, unsigned int *height, int *channels,
                       char *message, size_t message_size);
int kiln_png_rows_read(kiln_png_rows *rows, unsigned char *row);
const char *kiln_png_rows_message(const kiln_png_rows *rows);
void kiln_png_rows_close(kiln_png_rows *rows);

/* Reverses PNG's Paeth filter for two consecutive RGBA rows whose filter type is Paeth: row y
 * from its filtered bytes s0 and the row above prev into d0 (d0 may be s0 moved forwards: each
 * write lands on bytes already read), row y+1 from s1 into d1, a separate buffer. n: bytes per
 * row, a multiple of 4, at least 8. */
void kiln_png_unpaeth4_pair(unsigned char *d0, const unsigned char *s0, const unsigned char *prev,
                            unsigned char *d1, const unsigned char *s1, size_t n);

#endif
