/* libjpeg's API behind two calls that catch its longjmp errors (see kiln_jpeg.h). */
#include "kiln_jpeg.h"
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <jpeglib.h>

#define KILN_JPEG_MAX_SCANS 500

typedef struct {
    struct jpeg_error_mgr pub;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    char *message;
    size_t cap;
} kiln_jpeg_error;

static void set_message(kiln_jpeg_error *e, const char *text) {
    if (!e->message || e->cap == 0) return;
    snprintf(e->message, e->cap, "%s", text);
}

static void on_error(j_common_ptr cinfo) {
    kiln_jpeg_error *e = (kiln_jpeg_error *)cinfo->err;
    char text[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, text);
    set_message(e, text);
    longjmp(e->jump, 1);
}

/* level -1: a warning (corrupt data libjpeg would paper over); higher levels are traces. */
static void on_message(j_common_ptr cinfo, int level) {
    if (level < 0) on_error(cinfo);
}

static void on_progress(j_common_ptr cinfo) {
    j_decompress_ptr d = (j_decompress_ptr)cinfo;
    if (d->is_decompressor && d->input_scan_number > KILN_JPEG_MAX_SCANS) {
        kiln_jpeg_error *e = (kiln_jpeg_error *)cinfo->err;
        set_message(e, "Progressive JPEG image has more than 500 scans");
        longjmp(e->jump, 1);
    }
}

static void prepare(struct jpeg_decompress_struct *d, kiln_jpeg_error *e, char *message, size_t cap) {
    memset(e, 0, sizeof *e);
    e->message = message;
    e->cap = cap;
    if (message && cap) message[0] = 0;
    d->err = jpeg_std_error(&e->pub);
    e->pub.error_exit = on_error;
    e->pub.emit_message = on_message;
    e->progress.progress_monitor = on_progress;
}

static int header(struct jpeg_decompress_struct *d, const uint8_t *data, size_t len, kiln_jpeg_info *info) {
    jpeg_create_decompress(d);
    d->progress = &((kiln_jpeg_error *)d->err)->progress;
    jpeg_mem_src(d, data, (unsigned long)len);
    if (jpeg_read_header(d, TRUE) != JPEG_HEADER_OK) return -1;
    info->width = (int)d->image_width;
    info->height = (int)d->image_height;
    info->components = d->num_components;
    info->cmyk = d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK;
    return 0;
}

int kiln_jpeg_header(const uint8_t *data, size_t len, kiln_jpeg_info *info, char *message, size_t cap) {
    struct jpeg_decompress_struct d;
    kiln_jpeg_error e;
    memset(&d, 0, sizeof d);
    prepare(&d, &e, message, cap);
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    int rc = header(&d, data, len, info);
    if (rc != 0) set_message(&e, "not a JPEG image: no frame header");
    jpeg_destroy_decompress(&d);
    return rc;
}

int kiln_jpeg_decode(const uint8_t *data, size_t len, int scale_num, uint8_t *dst, size_t dst_len,
                     int *out_w, int *out_h, char *message, size_t cap) {
    struct jpeg_decompress_struct d;
    kiln_jpeg_error e;
    kiln_jpeg_info info;
    memset(&d, 0, sizeof d);
    prepare(&d, &e, message, cap);
    if (setjmp(e.jump)) {
        jpeg_destroy_decompress(&d);
        return -1;
    }
    if (header(&d, data, len, &info) != 0) {
        set_message(&e, "not a JPEG image: no frame header");
        jpeg_destroy_decompress(&d);
        return -1;
    }
    if (scale_num < 1 || scale_num > 8) scale_num = 8;
    d.scale_num = (unsigned int)scale_num;
    d.scale_denom = 8;
    d.out_color_space = info.cmyk ? JCS_CMYK : JCS_RGB;
    jpeg_calc_output_dimensions(&d);
    size_t channels = info.cmyk ? 4 : 3;
    size_t stride = (size_t)d.output_width * channels;
    if (d.output_components != (int)channels || stride * d.output_height != dst_len) {
        set_message(&e, "JPEG output size differs from the planned size");
        jpeg_destroy_decompress(&d);
        return -1;
    }
    jpeg_start_decompress(&d);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = dst + (size_t)d.output_scanline * stride;
        if (jpeg_read_scanlines(&d, &row, 1) != 1) {
            set_message(&e, "Premature end of JPEG file");
            jpeg_destroy_decompress(&d);
            return -1;
        }
    }
    jpeg_finish_decompress(&d);
    *out_w = (int)d.output_width;
    *out_h = (int)d.output_height;
    jpeg_destroy_decompress(&d);
    return 0;
}
