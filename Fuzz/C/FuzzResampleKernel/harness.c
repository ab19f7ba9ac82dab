// The resampler's C API (CKilnResample) straight from the input, under AddressSanitizer and
// UndefinedBehaviorSanitizer (scripts/fuzz builds this file with the toolchain's clang,
// -fsanitize=fuzzer,address,undefined, every UBSan finding fatal). Swift's `Resampler` only ever
// passes checked plans; this harness passes what a careless caller could: any sizes up to 64 px,
// 3 or 4 channels, every alpha mode and path, starts anywhere, and weights whose rows add up to
// anything up to and beyond the 2.0 bound in absolute value (the sums must never overflow). A side
// over KILN_RESAMPLE_MAX_SIDE must be refused before a byte is read.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "kiln_resample.h"

typedef struct {
    const uint8_t *data;
    size_t size, at;
} input;

static uint8_t next(input *in) {
    if (in->size == 0) return 0;
    uint8_t b = in->data[in->at % in->size];
    in->at++;
    return b;
}

// An axis of `count` outputs of `taps` each over `length` inputs: starts that never decrease,
// weights scaled so that each row's absolute sum is `limit` (a little over the bound sometimes).
static void make_axis(input *in, int32_t count, int32_t taps, int32_t length, int32_t *starts, int16_t *weights) {
    int32_t s = 0;
    int32_t last = length - taps < 0 ? 0 : length - taps;
    for (int32_t i = 0; i < count; i++) {
        s += next(in) % 3;
        if (s > last) s = last;
        starts[i] = s;
        int32_t raw[16], total = 0;
        for (int32_t t = 0; t < taps; t++) {
            raw[t] = (int8_t)next(in);
            total += raw[t] < 0 ? -raw[t] : raw[t];
        }
        // Mostly at or under the bound, now and then just over it (those must be refused).
        int32_t limit = KILN_RESAMPLE_MAX_WEIGHT_SUM + ((next(in) & 0x0f) == 0 ? 1 + next(in) : 0);
        if (total == 0) total = 1;
        for (int32_t t = 0; t < taps; t++) {
            int64_t w = (int64_t)raw[t] * limit / total;
            weights[(size_t)i * taps + t] = (int16_t)(w > INT16_MAX ? INT16_MAX : w < INT16_MIN ? INT16_MIN : w);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 12) return 0;
    input in = {data, size, 0};
    int32_t src_w = 1 + next(&in) % 64, src_h = 1 + next(&in) % 64;
    int32_t channels = 3 + (next(&in) & 1);
    int32_t alpha = next(&in) % 4;   // 3 is no mode: refused
    int32_t out_w = 1 + next(&in) % 64, out_h = 1 + next(&in) % 64;
    int32_t h_taps = 1 + next(&in) % 16, v_taps = 1 + next(&in) % 16;
    int32_t path = next(&in) % 4;
    int oversize = (next(&in) & 0x1f) == 0;

    uint8_t *src = malloc((size_t)src_w * src_h * channels);
    uint8_t *dst = malloc((size_t)out_w * out_h * channels);
    int32_t *hs = malloc(sizeof(int32_t) * (size_t)out_w), *vs = malloc(sizeof(int32_t) * (size_t)out_h);
    int16_t *hw = malloc(sizeof(int16_t) * (size_t)out_w * h_taps), *vw = malloc(sizeof(int16_t) * (size_t)out_h * v_taps);
    if (!src || !dst || !hs || !vs || !hw || !vw) abort();
    for (size_t i = 0; i < (size_t)src_w * src_h * channels; i++) src[i] = next(&in);
    make_axis(&in, out_w, h_taps, src_w, hs, hw);
    make_axis(&in, out_h, v_taps, src_h, vs, vw);
    kiln_resample_axis h = {out_w, h_taps, hs, hw}, v = {out_h, v_taps, vs, vw};

    if (oversize) {
        // Declared far larger than the buffer: refused before any read (ASan would see one).
        if (kiln_resample_u8(src, KILN_RESAMPLE_MAX_SIDE + 1, src_h, channels, alpha, &h, &v, dst, path) != -1) abort();
        if (kiln_resample_u8(src, src_w, INT32_MAX, channels, alpha, &h, &v, dst, path) != -1) abort();
    } else {
        int rc = kiln_resample_u8(src, src_w, src_h, channels, alpha, &h, &v, dst, path);
        if (rc != -1 && rc != -2 && rc != KILN_RESAMPLE_PORTABLE && rc != KILN_RESAMPLE_AVX2) abort();
    }
    free(src);
    free(dst);
    free(hs);
    free(vs);
    free(hw);
    free(vw);
    return 0;
}
