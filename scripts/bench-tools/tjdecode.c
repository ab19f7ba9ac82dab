/*
 * tjdecode: TurboJPEG's own cost of decoding one JPEG, as a reference for Kiln's per-request
 * CPU (scripts/bench). Decodes FILE N times at a DCT scale (1/1, 1/2, 1/4, 1/8) to RGB, with
 * the header parsed every time as a server must, and prints the CPU time per decode.
 *
 *   cc -O2 -o tjdecode tjdecode.c $(pkg-config --cflags --libs libturbojpeg)
 *   tjdecode photo_4000x3000.jpg 1/8 30
 *
 * Uses the TurboJPEG v2 API (Debian 12 ships libjpeg-turbo 2.1.5; 3.x keeps it).
 * Last line of output: ms_per_decode=<CPU milliseconds>
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <turbojpeg.h>

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s FILE NUM/DENOM COUNT\n", argv[0]);
        return 2;
    }
    int num = 0, denom = 0;
    if (sscanf(argv[2], "%d/%d", &num, &denom) != 2 || num <= 0 || denom <= 0) {
        fprintf(stderr, "bad scale %s (e.g. 1/8)\n", argv[2]);
        return 2;
    }
    int count = atoi(argv[3]);
    if (count <= 0) count = 1;

    FILE *f = fopen(argv[1], "rb");
    if (!f) { perror(argv[1]); return 1; }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *jpeg = malloc((size_t)size);
    if (!jpeg || fread(jpeg, 1, (size_t)size, f) != (size_t)size) { fprintf(stderr, "read failed\n"); return 1; }
    fclose(f);

    tjhandle tj = tjInitDecompress();
    if (!tj) { fprintf(stderr, "tjInitDecompress: %s\n", tjGetErrorStr()); return 1; }

    /* Check the scale is one TurboJPEG offers. */
    int nsf = 0, ok = 0;
    tjscalingfactor *sf = tjGetScalingFactors(&nsf);
    for (int i = 0; i < nsf; i++)
        if (sf[i].num * denom == num * sf[i].denom) ok = 1;
    if (!ok) { fprintf(stderr, "scale %d/%d not supported by TurboJPEG\n", num, denom); return 2; }

    int w = 0, h = 0, subsamp = 0, cs = 0;
    if (tjDecompressHeader3(tj, jpeg, (unsigned long)size, &w, &h, &subsamp, &cs) != 0) {
        fprintf(stderr, "header: %s\n", tjGetErrorStr2(tj));
        return 1;
    }
    tjscalingfactor s = { num, denom };
    int sw = TJSCALED(w, s), sh = TJSCALED(h, s);
    unsigned char *rgb = malloc((size_t)sw * (size_t)sh * 3);
    if (!rgb) { fprintf(stderr, "out of memory\n"); return 1; }

    /* One warm-up decode (page faults of the output buffer, caches). */
    if (tjDecompress2(tj, jpeg, (unsigned long)size, rgb, sw, 0, sh, TJPF_RGB, 0) != 0) {
        fprintf(stderr, "decode: %s\n", tjGetErrorStr2(tj));
        return 1;
    }
    double t0 = cpu_seconds();
    for (int i = 0; i < count; i++) {
        if (tjDecompressHeader3(tj, jpeg, (unsigned long)size, &w, &h, &subsamp, &cs) != 0 ||
            tjDecompress2(tj, jpeg, (unsigned long)size, rgb, sw, 0, sh, TJPF_RGB, 0) != 0) {
            fprintf(stderr, "decode: %s\n", tjGetErrorStr2(tj));
            return 1;
        }
    }
    double ms = (cpu_seconds() - t0) * 1000.0 / count;
    printf("%s: %dx%d -> %dx%d at %d/%d, %d decodes: %.2f ms CPU each\n", argv[1], w, h, sw, sh, num, denom, count, ms);
    printf("ms_per_decode=%.3f\n", ms);
    free(rgb);
    free(jpeg);
    tjDestroy(tj);
    return 0;
}
