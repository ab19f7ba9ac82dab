/*
 * webpfloor: libwebp's own cost of op5 (WebP -> w800 WebP), as the floor Kiln's per-request CPU
 * is compared with (scripts/bench): decoding the source (VP8 has no scaled decode that saves
 * work: libwebp's scaled output decodes everything and rescales) plus encoding an image of the
 * output size at the same quality and method. The resize between them is Kiln's own (not timed).
 *
 *   cc -O2 -o webpfloor webpfloor.c $(pkg-config --cflags --libs libwebp)
 *   webpfloor photo_1920x1080.webp 800 80 2 20
 *
 * Last line of output: ms_decode=<CPU ms> ms_encode=<CPU ms> ms_floor=<sum>
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
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

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: %s FILE.webp OUT_WIDTH QUALITY METHOD COUNT\n", argv[0]);
        return 2;
    }
    int out_w = atoi(argv[2]), method = atoi(argv[4]), count = atoi(argv[5]);
    float quality = (float)atof(argv[3]);
    if (out_w <= 0 || count <= 0 || count > 1000) return 2;
    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "cannot read %s\n", argv[1]); return 1; }
    fclose(f);

    double *dec = calloc((size_t)count, sizeof *dec), *enc = calloc((size_t)count, sizeof *enc);
    int w = 0, h = 0;
    size_t bytes = 0;
    for (int i = 0; i < count; i++) {
        double t = cpu_ms();
        uint8_t *rgb = WebPDecodeRGB(data, (size_t)n, &w, &h);
        dec[i] = cpu_ms() - t;
        if (!rgb) { fprintf(stderr, "decode failed\n"); return 1; }
        WebPPicture pic;
        WebPConfig config;
        if (!WebPPictureInit(&pic) || !WebPConfigInit(&config)) return 1;
        config.quality = quality;
        config.method = method;
        pic.use_argb = 1;
        pic.width = w;
        pic.height = h;
        if (!WebPPictureImportRGB(&pic, rgb, w * 3)) return 1;
        WebPFree(rgb);
        int out_h = (int)((long)h * out_w / w);
        if (!WebPPictureRescale(&pic, out_w, out_h)) return 1;
        WebPMemoryWriter writer;
        WebPMemoryWriterInit(&writer);
        pic.writer = WebPMemoryWrite;
        pic.custom_ptr = &writer;
        t = cpu_ms();
        if (!WebPEncode(&config, &pic)) { fprintf(stderr, "encode failed\n"); return 1; }
        enc[i] = cpu_ms() - t;
        bytes = writer.size;
        WebPMemoryWriterClear(&writer);
        WebPPictureFree(&pic);
    }
    qsort(dec, (size_t)count, sizeof *dec, by_double);
    qsort(enc, (size_t)count, sizeof *enc, by_double);
    double d = dec[count / 2], e = enc[count / 2];
    printf("%s: %dx%d decode %.2f ms, encode to %d wide q%.0f method %d (%zu bytes) %.2f ms (medians of %d)\n",
           argv[1], w, h, d, out_w, quality, method, bytes, e, count);
    printf("ms_decode=%.2f ms_encode=%.2f ms_floor=%.2f\n", d, e, d + e);
    return 0;
}
