#ifndef KILN_JPEG_H
#define KILN_JPEG_H
#include <stddef.h>
#include <stdint.h>
/* libjpeg's own API, for the JPEGs that TurboJPEG's v2 API refuses although libjpeg decodes them:
 * sampling factors it cannot classify ("Could not determine subsampling type", e.g. 3x2, 4x2,
 * 1x4 or a different factor per component). libjpeg reports errors with longjmp, which Swift
 * cannot catch, so these two calls wrap it. The policy is Kiln's TurboJPEG one: any libjpeg
 * warning is an error (its message is returned), and more than 500 scans is refused (progressive
 * scan bombs, TurboJPEG's TJFLAG_LIMITSCANS). Both return 0, or -1 with a one-line message. */

typedef struct {
    int width, height;
    int components;
    /* 1 when libjpeg decodes to CMYK (CMYK or YCCK files), 0 for RGB output. */
    int cmyk;
} kiln_jpeg_info;

/* Reads the frame header only. */
int kiln_jpeg_header(const uint8_t *data, size_t len, kiln_jpeg_info *info, char *message, size_t cap);

/* Decodes at scale_num/8 (1...8, libjpeg's DCT scaling) into `dst`: out_w x out_h pixels of 3
 * bytes (RGB) or, for CMYK files, 4 (CMYK as stored: Adobe files inverted). `dst_len` must be
 * exactly that size (the caller computes it with ceil(size * scale_num / 8)). */
int kiln_jpeg_decode(const uint8_t *data, size_t len, int scale_num, uint8_t *dst, size_t dst_len,
                     int *out_w, int *out_h, char *message, size_t cap);
#endif
