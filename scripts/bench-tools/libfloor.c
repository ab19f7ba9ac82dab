/*
 * libfloor: the codec libraries' own cost of one standard op, the floors `scripts/bench` compares
 * Kiln's CPU per request with (issue 29). Times, in process CPU time, medians of COUNT runs:
 *
 *   decode  the source with the library alone: TurboJPEG (tjDecompress2, header parsed each
 *           time, at the DCT scale Kiln chooses), libwebp (WebPDecodeRGB/RGBA), libpng
 *           (8-bit RGB/RGBA: libdeflate's inflate of the IDAT stream, as Kiln's fast path; the
 *           row unfilter runs but is not counted; LIBFLOOR_LIBPNG=1: libpng's png_read_image);
 *   encode  the output's pixels (PIXELS_FILE: Kiln's own answer, decoded; else the decoded source
 *           brought to the output size by a box filter, untimed) at Kiln's settings: TurboJPEG 4:2:0 at quality Q (tjCompress2); libwebp at quality Q
 *           and method M; PNG as Kiln writes it: per row the filter of least sum of absolute
 *           differences, then one libdeflate zlib stream at level L (Kiln's own shim; libpng with
 *           zlib costs several times more).
 *
 * The resize between them is Pillow-SIMD's (scripts/bench-tools/pillow_resize.py), not here.
 *
 *   cc -O2 -o libfloor libfloor.c $(pkg-config --cflags --libs libturbojpeg libwebp libpng) -ldeflate
 *   libfloor photo_1920x1080.jpg 5/8 800x450 jpeg:80 20
 *   libfloor photo_1920x1080.webp 1/1 800x450 webp:80:2 20
 *   libfloor alpha_1920x1080.png 1/1 400x225 png:6 20
 *   libfloor --scales photo_1920x1080.jpg 20     every TurboJPEG scale, interleaved
 *
 *   libfloor photo_1920x1080.jpg 5/8 800x450 jpeg:80 20 kiln-answer.jpg
 *
 * Last line: ms_decode=<CPU ms> ms_encode=<CPU ms> decoded=<W>x<H>
 */
#include <libdeflate.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/encode.h>

static double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, by_double);
    return v[n / 2];
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
    *size = (size_t)n;
    return data;
}

static int paeth(int a, int b, int c);

/* ---- decoders: return malloc'd 8-bit pixels, set w, h, channels ------------------------------ */

static unsigned char *decode_jpeg(tjhandle tj, const unsigned char *data, size_t n, int num, int denom,
                                  int *w, int *h, int *channels) {
    int fw, fh, sub, cs;
    if (tjDecompressHeader3(tj, data, (unsigned long)n, &fw, &fh, &sub, &cs) != 0) return NULL;
    *w = (fw * num + denom - 1) / denom;
    *h = (fh * num + denom - 1) / denom;
    *channels = 3;
    unsigned char *out = malloc((size_t)*w * (size_t)*h * 3);
    if (tjDecompress2(tj, data, (unsigned long)n, out, *w, 0, *h, TJPF_RGB, 0) != 0) { free(out); return NULL; }
    return out;
}

static unsigned char *decode_webp(const unsigned char *data, size_t n, int *w, int *h, int *channels) {
    WebPBitstreamFeatures features;
    if (WebPGetFeatures(data, n, &features) != VP8_STATUS_OK) return NULL;
    *channels = features.has_alpha ? 4 : 3;
    uint8_t *p = features.has_alpha ? WebPDecodeRGBA(data, n, w, h) : WebPDecodeRGB(data, n, w, h);
    if (!p) return NULL;
    size_t bytes = (size_t)*w * (size_t)*h * (size_t)*channels;
    unsigned char *out = malloc(bytes);
    memcpy(out, p, bytes);   /* WebPFree'd memory must not leak into free() */
    WebPFree(p);
    return out;
}

/* PNG as Kiln's fast path reads the common files (8-bit RGB/RGBA, not interlaced): the IDAT
 * chunks joined, inflated by libdeflate in one call, the rows unfiltered. libpng's own
 * png_read_image (zlib, SSE2 unfilter) costs more on the op3 source; it is the path for the
 * other files (decode_png_libpng). */
/* The unfilter's share of the last decode_png_libdeflate: not counted in the floor (this scalar
 * loop is 1.5-2x libdeflate's inflate; Kiln unfilters Paeth in SIMD lanes), so the PNG decode
 * floor is the inflate alone, lower than any real decoder's. */
static double png_unfilter_ms;

static unsigned int be32(const unsigned char *p) { return (unsigned)p[0] << 24 | (unsigned)p[1] << 16 | (unsigned)p[2] << 8 | p[3]; }

static unsigned char *decode_png_libdeflate(struct libdeflate_decompressor *z, const unsigned char *data, size_t n,
                                            int *w, int *h, int *channels) {
    size_t pos = 8, idat_size = 0;
    unsigned char *idat = malloc(n);
    int depth = 0, type = 0, interlace = 0;
    while (pos + 12 <= n) {
        unsigned int len = be32(data + pos);
        const unsigned char *tag = data + pos + 4, *body = data + pos + 8;
        if (pos + 12 + len > n) break;
        if (!memcmp(tag, "IHDR", 4)) {
            *w = (int)be32(body); *h = (int)be32(body + 4);
            depth = body[8]; type = body[9]; interlace = body[12];
        } else if (!memcmp(tag, "IDAT", 4)) {
            memcpy(idat + idat_size, body, len);
            idat_size += len;
        }
        pos += 12 + len;
    }
    if (depth != 8 || interlace || (type != 2 && type != 6)) { free(idat); return NULL; }
    int c = type == 6 ? 4 : 3;
    *channels = c;
    size_t row = (size_t)*w * (size_t)c, raw_size = (row + 1) * (size_t)*h, got = 0;
    unsigned char *raw = malloc(raw_size), *out = malloc(row * (size_t)*h);
    if (libdeflate_zlib_decompress(z, idat, idat_size, raw, raw_size, &got) != LIBDEFLATE_SUCCESS || got != raw_size) {
        free(idat); free(raw); free(out);
        return NULL;
    }
    double unfilter_start = cpu_ms();
    for (int y = 0; y < *h; y++) {
        const unsigned char *src = raw + (size_t)y * (row + 1) + 1;
        unsigned char *dst = out + (size_t)y * row, *prev = y ? dst - row : NULL;
        int f = src[-1];
        size_t i = 0;
        if (!prev && (f == 2 || f == 4)) f = f == 2 ? 0 : 1;   /* no row above: Up is None, Paeth is Sub */
        switch (f) {
        case 0: memcpy(dst, src, row); break;
        case 1: for (; i < (size_t)c; i++) dst[i] = src[i];
                for (; i < row; i++) dst[i] = (unsigned char)(src[i] + dst[i - c]);
                break;
        case 2: for (; i < row; i++) dst[i] = (unsigned char)(src[i] + prev[i]); break;
        case 3: for (; i < (size_t)c; i++) dst[i] = (unsigned char)(src[i] + (prev ? prev[i] : 0) / 2);
                for (; i < row; i++) dst[i] = (unsigned char)(src[i] + (dst[i - c] + (prev ? prev[i] : 0)) / 2);
                break;
        default: for (; i < (size_t)c; i++) dst[i] = (unsigned char)(src[i] + prev[i]);
                 for (; i < row; i++) dst[i] = (unsigned char)(src[i] + paeth(dst[i - c], prev[i], prev[i - c]));
        }
    }
    png_unfilter_ms = cpu_ms() - unfilter_start;
    free(idat);
    free(raw);
    return out;
}

struct mem_reader { const unsigned char *data; size_t size, pos; };

static void png_read_mem(png_structp png, png_bytep out, png_size_t n) {
    struct mem_reader *r = png_get_io_ptr(png);
    if (r->pos + n > r->size) png_error(png, "truncated");
    memcpy(out, r->data + r->pos, n);
    r->pos += n;
}

static unsigned char *decode_png_libpng(const unsigned char *data, size_t n, int *w, int *h, int *channels) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    unsigned char *volatile out = NULL;
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &info, NULL);
        free(out);
        free(rows);
        return NULL;
    }
    struct mem_reader reader = {data, n, 0};
    png_set_read_fn(png, &reader, png_read_mem);
    png_read_info(png, info);
    png_set_expand(png);
    png_set_strip_16(png);
    png_set_gray_to_rgb(png);
    png_read_update_info(png, info);
    *w = (int)png_get_image_width(png, info);
    *h = (int)png_get_image_height(png, info);
    *channels = png_get_channels(png, info);
    size_t stride = png_get_rowbytes(png, info);
    out = malloc(stride * (size_t)*h);
    rows = malloc(sizeof(png_bytep) * (size_t)*h);
    for (int y = 0; y < *h; y++) rows[y] = out + (size_t)y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);
    png_destroy_read_struct(&png, &info, NULL);
    free(rows);
    return out;
}

/* ---- the output-size image (untimed) ---------------------------------------------------------- */

static unsigned char *box_shrink(const unsigned char *src, int sw, int sh, int c, int ow, int oh) {
    unsigned char *out = malloc((size_t)ow * (size_t)oh * (size_t)c);
    for (int y = 0; y < oh; y++) {
        int y0 = (int)((long)y * sh / oh), y1 = (int)((long)(y + 1) * sh / oh);
        if (y1 <= y0) y1 = y0 + 1;
        for (int x = 0; x < ow; x++) {
            int x0 = (int)((long)x * sw / ow), x1 = (int)((long)(x + 1) * sw / ow);
            if (x1 <= x0) x1 = x0 + 1;
            for (int k = 0; k < c; k++) {
                long sum = 0;
                for (int yy = y0; yy < y1; yy++)
                    for (int xx = x0; xx < x1; xx++) sum += src[((size_t)yy * sw + xx) * c + k];
                out[((size_t)y * ow + x) * c + k] = (unsigned char)(sum / ((long)(y1 - y0) * (x1 - x0)));
            }
        }
    }
    return out;
}

/* ---- encoders: return the encoded size -------------------------------------------------------- */

static size_t encode_jpeg(tjhandle tj, const unsigned char *px, int w, int h, int quality) {
    unsigned char *out = NULL;
    unsigned long size = 0;
    if (tjCompress2(tj, px, w, 0, h, TJPF_RGB, &out, &size, TJSAMP_420, quality, 0) != 0) return 0;
    tjFree(out);
    return size;
}

static size_t encode_webp(const unsigned char *px, int w, int h, int c, float quality, int method) {
    WebPConfig config;
    WebPPicture pic;
    if (!WebPConfigInit(&config) || !WebPPictureInit(&pic)) return 0;
    config.quality = quality;
    config.method = method;
    pic.width = w;
    pic.height = h;
    pic.use_argb = 1;
    int ok = c == 4 ? WebPPictureImportRGBA(&pic, px, w * 4) : WebPPictureImportRGB(&pic, px, w * 3);
    if (!ok) return 0;
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    pic.writer = WebPMemoryWrite;
    pic.custom_ptr = &writer;
    size_t size = WebPEncode(&config, &pic) ? writer.size : 0;
    WebPMemoryWriterClear(&writer);
    WebPPictureFree(&pic);
    return size;
}

static int paeth(int a, int b, int c) {
    int p = b - c, q = a - c;
    int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
    if (pa <= pb && pa <= pc) return a;
    return pb <= pc ? b : c;
}

/* One row filtered with `type` into out; returns its sum of absolute (signed) differences. */
static unsigned long filter_row(int type, const unsigned char *row, const unsigned char *prev, size_t n, int bpp,
                                unsigned char *out) {
    unsigned long cost = 0;
    for (size_t i = 0; i < n; i++) {
        int a = i >= (size_t)bpp ? row[i - bpp] : 0, b = prev ? prev[i] : 0, c = (prev && i >= (size_t)bpp) ? prev[i - bpp] : 0;
        int predicted = type == 0 ? 0 : type == 1 ? a : type == 2 ? b : type == 3 ? (a + b) / 2 : paeth(a, b, c);
        unsigned char v = (unsigned char)(row[i] - predicted);
        out[i] = v;
        cost += v < 128 ? v : 256 - v;
    }
    return cost;
}

static size_t encode_png(struct libdeflate_compressor *z, const unsigned char *px, int w, int h, int c) {
    size_t n = (size_t)w * (size_t)c;
    unsigned char *filtered = malloc((n + 1) * (size_t)h), *trial = malloc(n);
    for (int y = 0; y < h; y++) {
        const unsigned char *row = px + (size_t)y * n, *prev = y ? row - n : NULL;
        unsigned char *dst = filtered + (size_t)y * (n + 1);
        unsigned long best = (unsigned long)-1;
        for (int t = 0; t < 5; t++) {
            unsigned long cost = filter_row(t, row, prev, n, c, trial);
            if (cost < best) { best = cost; dst[0] = (unsigned char)t; memcpy(dst + 1, trial, n); }
        }
    }
    size_t bound = libdeflate_zlib_compress_bound(z, (n + 1) * (size_t)h);
    unsigned char *out = malloc(bound);
    size_t size = libdeflate_zlib_compress(z, filtered, (n + 1) * (size_t)h, out, bound);
    free(filtered);
    free(trial);
    free(out);
    return size;
}

/* ---- main ------------------------------------------------------------------------------------- */

enum kind { JPEG, WEBP, PNG };

static enum kind kind_of(const unsigned char *d, size_t n) {
    if (n > 3 && d[0] == 0xFF && d[1] == 0xD8) return JPEG;
    if (n > 12 && !memcmp(d, "RIFF", 4) && !memcmp(d + 8, "WEBP", 4)) return WEBP;
    if (n > 8 && !memcmp(d, "\x89PNG", 4)) return PNG;
    fprintf(stderr, "not a JPEG, WebP or PNG file\n");
    exit(2);
}

static int scales_mode(const char *path, int count) {
    static const int nums[] = {8, 7, 6, 5, 4, 3, 2, 1};
    size_t n;
    unsigned char *data = read_file(path, &n);
    tjhandle tj = tjInitDecompress();
    double *t[8];
    for (int s = 0; s < 8; s++) t[s] = calloc((size_t)count, sizeof(double));
    for (int i = -1; i < count; i++) {
        for (int s = 0; s < 8; s++) {
            int w, h, c;
            double start = cpu_ms();
            unsigned char *px = decode_jpeg(tj, data, n, nums[s], 8, &w, &h, &c);
            double elapsed = cpu_ms() - start;
            if (!px) { fprintf(stderr, "decode failed: %s\n", tjGetErrorStr2(tj)); return 1; }
            free(px);
            if (i >= 0) t[s][i] = elapsed;
        }
    }
    for (int s = 0; s < 8; s++) printf("scale %d/8: median %.2f CPU ms\n", nums[s], median(t[s], count));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "--scales")) return scales_mode(argv[2], atoi(argv[3]));
    const char *pixels_path = NULL;
    int num, denom, ow, oh, count = argc >= 6 ? atoi(argv[5]) : 0;
    if (argc == 7) { pixels_path = argv[6]; argc = 6; }
    if (argc != 6 || sscanf(argv[2], "%d/%d", &num, &denom) != 2 || num <= 0 || denom <= 0 ||
        sscanf(argv[3], "%dx%d", &ow, &oh) != 2 || ow <= 0 || oh <= 0 || count <= 0 || count > 1000) {
        fprintf(stderr, "usage: %s FILE NUM/DENOM WxH jpeg:Q|webp:Q:M|png:L COUNT [PIXELS_FILE]\n       %s --scales FILE.jpg COUNT\n",
                argv[0], argv[0]);
        return 2;
    }
    int q = 0, m = 0;
    char codec[8] = {0};
    if (sscanf(argv[4], "%7[a-z]:%d:%d", codec, &q, &m) < 2) { fprintf(stderr, "bad encoder %s\n", argv[4]); return 2; }
    size_t n;
    unsigned char *data = read_file(argv[1], &n);
    enum kind kind = kind_of(data, n);
    tjhandle tjd = tjInitDecompress(), tjc = tjInitCompress();
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(q);
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    int libpng = getenv("LIBFLOOR_LIBPNG") != NULL;
    double *dec = calloc((size_t)count, sizeof(double)), *enc = calloc((size_t)count, sizeof(double));
    /* The pixels to encode: Kiln's own output decoded (PIXELS_FILE), else the decoded source
     * brought to the output size by a box filter. */
    unsigned char *given = NULL;
    if (pixels_path) {
        size_t pn;
        unsigned char *pdata = read_file(pixels_path, &pn);
        enum kind pk = kind_of(pdata, pn);
        int pw = 0, ph = 0, pc = 0;
        given = pk == JPEG ? decode_jpeg(tjd, pdata, pn, 1, 1, &pw, &ph, &pc)
              : pk == WEBP ? decode_webp(pdata, pn, &pw, &ph, &pc) : decode_png_libpng(pdata, pn, &pw, &ph, &pc);
        if (!given || pw != ow || ph != oh) { fprintf(stderr, "%s: not a %dx%d image\n", pixels_path, ow, oh); return 1; }
        free(pdata);
    }
    int w = 0, h = 0, c = 0;
    size_t bytes = 0;
    for (int i = -1; i < count; i++) {      /* run -1 warms up */
        double start = cpu_ms();
        unsigned char *px = kind == JPEG ? decode_jpeg(tjd, data, n, num, denom, &w, &h, &c)
                          : kind == WEBP ? decode_webp(data, n, &w, &h, &c) : libpng ? decode_png_libpng(data, n, &w, &h, &c)
                          : decode_png_libdeflate(inflater, data, n, &w, &h, &c);
        double elapsed = cpu_ms() - start - (kind == PNG && !libpng ? png_unfilter_ms : 0);
        if (!px) { fprintf(stderr, "decode failed\n"); return 1; }
        if (i >= 0) dec[i] = elapsed;
        unsigned char *small = given ? given : box_shrink(px, w, h, c, ow, oh);
        free(px);
        start = cpu_ms();
        if (!strcmp(codec, "jpeg")) {
            if (c != 3) { fprintf(stderr, "JPEG needs RGB\n"); return 2; }
            bytes = encode_jpeg(tjc, small, ow, oh, q);
        } else if (!strcmp(codec, "webp")) {
            bytes = encode_webp(small, ow, oh, c, (float)q, m);
        } else if (!strcmp(codec, "png")) {
            bytes = encode_png(z, small, ow, oh, c);
        } else {
            fprintf(stderr, "unknown encoder %s\n", codec);
            return 2;
        }
        elapsed = cpu_ms() - start;
        if (small != given) free(small);
        if (!bytes) { fprintf(stderr, "encode failed\n"); return 1; }
        if (i >= 0) enc[i] = elapsed;
    }
    double d = median(dec, count), e = median(enc, count);
    printf("%s: decode to %dx%d %.2f ms, encode %dx%d %s (%zu bytes) %.2f ms (medians of %d)\n",
           argv[1], w, h, d, ow, oh, argv[4], bytes, e, count);
    printf("ms_decode=%.3f ms_encode=%.3f decoded=%dx%d\n", d, e, w, h);
    return 0;
}
