/* Row-by-row PNG decoding with libpng's low-level API (see include/kiln_png.h): the pixels of a
 * large source pass through one row at a time, so a caller that shrinks while reading never holds
 * the whole image. Only files whose rows come out exactly as the simplified API's
 * (png_image_finish_read, 8-bit RGB/RGBA) would give them are accepted: non-interlaced, at most
 * 8 bits per sample, and sRGB-encoded (no gAMA chunk, or one that says sRGB). */
#include "kiln_png.h"
#include <png.h>
#include <stdlib.h>
#include <string.h>

struct kiln_png_rows {
    png_structp png;
    png_infop info;
    const unsigned char *data;
    size_t size;
    size_t offset;
    char message[128];
};

static void kiln_png_rows_error(png_structp png, png_const_charp text) {
    struct kiln_png_rows *rows = (struct kiln_png_rows *)png_get_error_ptr(png);
    strncpy(rows->message, text != NULL ? text : "libpng error", sizeof rows->message - 1);
    rows->message[sizeof rows->message - 1] = '\0';
    png_longjmp(png, 1);
}

static void kiln_png_rows_warning(png_structp png, png_const_charp text) {
    (void)png;
    (void)text;
}

static void kiln_png_rows_input(png_structp png, png_bytep out, size_t length) {
    struct kiln_png_rows *rows = (struct kiln_png_rows *)png_get_io_ptr(png);
    if (length > rows->size - rows->offset) png_error(png, "read past end of data (truncated)");
    memcpy(out, rows->data + rows->offset, length);
    rows->offset += length;
}

void kiln_png_rows_close(struct kiln_png_rows *rows) {
    if (rows == NULL) return;
    png_destroy_read_struct(&rows->png, &rows->info, NULL);
    free(rows);
}

int kiln_png_rows_open(const unsigned char *data, size_t size, struct kiln_png_rows **out,
                       unsigned int *width, unsigned int *height, int *channels,
                       char *message, size_t message_size) {
    *out = NULL;
    if (message != NULL && message_size > 0) message[0] = '\0';
    struct kiln_png_rows *rows = calloc(1, sizeof *rows);
    if (rows == NULL) return -1;
    rows->data = data;
    rows->size = size;
    rows->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, rows, kiln_png_rows_error, kiln_png_rows_warning);
    if (rows->png != NULL) rows->info = png_create_info_struct(rows->png);
    if (rows->png == NULL || rows->info == NULL) {
        kiln_png_rows_close(rows);
        if (message != NULL && message_size > 0) strncpy(message, "out of memory", message_size - 1);
        return -1;
    }
    if (setjmp(png_jmpbuf(rows->png))) {
        if (message != NULL && message_size > 0) {
            strncpy(message, rows->message, message_size - 1);
            message[message_size - 1] = '\0';
        }
        kiln_png_rows_close(rows);
        return -1;
    }
    png_set_benign_errors(rows->png, 1);
    png_set_read_fn(rows->png, rows, kiln_png_rows_input);
    png_read_info(rows->png, rows->info);

    int depth = png_get_bit_depth(rows->png, rows->info);
    int type = png_get_color_type(rows->png, rows->info);
    int interlace = png_get_interlace_type(rows->png, rows->info);
    png_fixed_point gamma = 0;
    int has_gamma = png_get_gAMA_fixed(rows->png, rows->info, &gamma) != 0;
    int is_srgb = png_get_valid(rows->png, rows->info, PNG_INFO_sRGB) != 0;
    if (depth > 8 || interlace != PNG_INTERLACE_NONE || (has_gamma && !is_srgb && gamma != 45455 /* sRGB: 1/2.2 × 100000 */)) {
        kiln_png_rows_close(rows);
        return 0;   /* not eligible: the caller decodes the whole image */
    }
    int trns = png_get_valid(rows->png, rows->info, PNG_INFO_tRNS) != 0;
    int alpha = trns || (type & PNG_COLOR_MASK_ALPHA) != 0;
    if (type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(rows->png);
    if ((type & PNG_COLOR_MASK_COLOR) == 0) {
        if (depth < 8) png_set_expand_gray_1_2_4_to_8(rows->png);
        png_set_gray_to_rgb(rows->png);
    }
    if (trns) png_set_tRNS_to_alpha(rows->png);
    png_read_update_info(rows->png, rows->info);
    *width = png_get_image_width(rows->png, rows->info);
    *height = png_get_image_height(rows->png, rows->info);
    *channels = png_get_channels(rows->png, rows->info);
    if (*channels != (alpha ? 4 : 3) || png_get_bit_depth(rows->png, rows->info) != 8) {
        kiln_png_rows_close(rows);
        return 0;
    }
    *out = rows;
    return 1;
}

int kiln_png_rows_read(struct kiln_png_rows *rows, unsigned char *row) {
    if (setjmp(png_jmpbuf(rows->png))) return -1;
    png_read_row(rows->png, row, NULL);
    return 0;
}

const char *kiln_png_rows_message(const struct kiln_png_rows *rows) { return rows->message; }
