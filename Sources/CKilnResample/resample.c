// The driver and the portable path of kiln_resample_u8 (see kiln_resample.h for the arithmetic).
#include <stdlib.h>
#include <string.h>
#include "kiln_resample.h"
#include "resample_internal.h"

// The alpha step's float arithmetic must round the same here as on the AVX2 path: no fused
// multiply-add even when a build targets a CPU that has one.
#pragma STDC FP_CONTRACT OFF

int kiln_resample_has_avx2(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
#else
    return 0;
#endif
}

// One process, one kernel: chosen by `debug.resampler` (never by the environment or the CPU's
// features, which would let two hosts of a fleet store different bytes under one cache key).
static int default_path = KILN_RESAMPLE_AUTO;

int kiln_resample_default_path(void) {
    return __atomic_load_n(&default_path, __ATOMIC_RELAXED);
}

void kiln_resample_set_default_path(int path) {
    if (path < KILN_RESAMPLE_AUTO || path > KILN_RESAMPLE_FLOAT) return;
    __atomic_store_n(&default_path, path, __ATOMIC_RELAXED);
}

// ---- portable path ---------------------------------------------------------------------------

void kr_widen_portable(const kr_context *k, const uint8_t *src_row, int16_t *w) {
    const uint8_t *s = src_row + (size_t)k->first_column * k->channels;
    int n = k->column_count;
    if (k->channels == 3) {
        for (int i = 0; i < n; i++) {
            w[4 * i] = (int16_t)(s[3 * i] << KR_SOURCE_BITS);
            w[4 * i + 1] = (int16_t)(s[3 * i + 1] << KR_SOURCE_BITS);
            w[4 * i + 2] = (int16_t)(s[3 * i + 2] << KR_SOURCE_BITS);
            w[4 * i + 3] = 0;
        }
    } else if (k->alpha == KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND) {
        for (int i = 0; i < n; i++) {
            uint32_t a = s[4 * i + 3];
            for (int c = 0; c < 3; c++) {
                uint32_t v = (uint32_t)s[4 * i + c] * a << KR_SOURCE_BITS;   // <= 8,323,200
                w[4 * i + c] = (int16_t)((v + 127) / 255);                  // round(v * a * 128 / 255)
            }
            w[4 * i + 3] = (int16_t)(a << KR_SOURCE_BITS);
        }
    } else {
        for (int i = 0; i < 4 * n; i++) w[i] = (int16_t)(s[i] << KR_SOURCE_BITS);
    }
}

void kr_horizontal_portable(const kr_context *k, const int16_t *wide, int16_t *out) {
    const int taps = k->h_taps;
    const int C = k->channels;
    const int32_t round = 1 << (KR_H_SHIFT - 1);
    // Four channels as one vector of four int32 sums (GNU C vector extensions: SSE2 on x86-64,
    // NEON on arm64, plain scalar code elsewhere).
    typedef int32_t v4i32 __attribute__((vector_size(16)));
    typedef int16_t v4i16 __attribute__((vector_size(8)));
    for (int x = 0; x < k->out_width; x++) {
        const int16_t *p = wide + (size_t)k->h_starts[x] * 4;
        const int16_t *w = k->h_weights + (size_t)x * taps;
        v4i32 s0 = {0, 0, 0, 0}, s1 = {0, 0, 0, 0};
        int t = 0;
        for (; t + 2 <= taps; t += 2) {
            v4i16 a, b;
            memcpy(&a, p + 4 * t, sizeof a);
            memcpy(&b, p + 4 * t + 4, sizeof b);
            s0 += __builtin_convertvector(a, v4i32) * w[t];
            s1 += __builtin_convertvector(b, v4i32) * w[t + 1];
        }
        for (; t < taps; t++) {
            v4i16 a;
            memcpy(&a, p + 4 * t, sizeof a);
            s0 += __builtin_convertvector(a, v4i32) * w[t];
        }
        v4i32 sum = s0 + s1;
        int16_t *o = out + (size_t)x * C;
        o[0] = kr_clamp16((sum[0] + round) >> KR_H_SHIFT);
        o[1] = kr_clamp16((sum[1] + round) >> KR_H_SHIFT);
        o[2] = kr_clamp16((sum[2] + round) >> KR_H_SHIFT);
        if (C == 4) o[3] = kr_clamp16((sum[3] + round) >> KR_H_SHIFT);
    }
}

void kr_vertical_portable(const kr_context *k, const int16_t *const *rows, const int16_t *weights,
                          int taps, int32_t *acc) {
    // Products of two int16 (not int16 by int32): SSE2 and NEON multiply those 8 lanes at once.
    const int n = k->row_length;
    for (int i = 0; i < n; i++) acc[i] = 0;
    int t = 0;
    for (; t + 2 <= taps; t += 2) {
        const int16_t *a = rows[t], *b = rows[t + 1];
        const int16_t wa = weights[t], wb = weights[t + 1];
        for (int i = 0; i < n; i++) acc[i] += a[i] * wa + b[i] * wb;
    }
    if (t < taps) {
        const int16_t *a = rows[t];
        const int16_t wa = weights[t];
        for (int i = 0; i < n; i++) acc[i] += a[i] * wa;
    }
}

void kr_store_portable(const kr_context *k, const int32_t *acc, uint8_t *dst) {
    const int n = k->row_length;
    switch (k->alpha) {
    case KILN_RESAMPLE_ALPHA_KEEP_PREMULTIPLIED:
        for (int i = 0; i < n; i += 4) {
            uint8_t a = kr_byte(acc[i + 3]);
            for (int c = 0; c < 3; c++) {
                uint8_t v = kr_byte(acc[i + c]);
                dst[i + c] = v < a ? v : a;
            }
            dst[i + 3] = a;
        }
        break;
    case KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND:
        for (int i = 0; i < n; i += 4) {
            int32_t alpha = acc[i + 3];
            uint8_t a = kr_byte(alpha);
            if (a == 0) {
                dst[i] = dst[i + 1] = dst[i + 2] = dst[i + 3] = 0;
                continue;
            }
            // Divide by the unclamped alpha, as the float path does: ringing moves colour and
            // alpha together. `alpha` >= 2^19 here.
            float f = 255.0f / (float)alpha;
            for (int c = 0; c < 3; c++) {
                float v = (float)acc[i + c] * f + 0.5f;
                dst[i + c] = v <= 0.0f ? 0 : (v >= 255.0f ? 255 : (uint8_t)v);
            }
            dst[i + 3] = a;
        }
        break;
    default:
        for (int i = 0; i < n; i++) dst[i] = kr_byte(acc[i]);
    }
}

// ---- driver ----------------------------------------------------------------------------------

static int valid_axis(const kiln_resample_axis *a, int32_t source_length) {
    if (!a || a->count <= 0 || a->count > KILN_RESAMPLE_MAX_SIDE || a->taps <= 0 || a->taps > source_length
        || !a->starts || !a->weights)
        return 0;
    int32_t previous = 0;
    for (int32_t i = 0; i < a->count; i++) {
        int32_t s = a->starts[i];
        if (s < previous || s > source_length - a->taps) return 0;
        previous = s;
        // Bounded weights keep every int32 sum in range, rounding included: |x| <= 32767 and
        // sum |w| <= KILN_RESAMPLE_MAX_WEIGHT_SUM (2.0) give |sum| <= 2^30 - 2^15, and the
        // largest rounding term added to it is 2^19. (At 4.0 the sum itself would reach
        // 2^31 - 2^16 and its rounding overflow.) Real kernels stay below 1.3.
        int32_t magnitude = 0;
        for (int32_t t = 0; t < a->taps; t++) {
            int32_t w = a->weights[(size_t)i * a->taps + t];
            magnitude += w < 0 ? -w : w;
            if (magnitude > KILN_RESAMPLE_MAX_WEIGHT_SUM) return 0;
        }
    }
    return 1;
}

int kiln_resample_u8(const uint8_t *src, int32_t src_width, int32_t src_height, int32_t channels,
                     int32_t alpha, const kiln_resample_axis *horizontal,
                     const kiln_resample_axis *vertical, uint8_t *dst, int32_t path) {
    if (!src || !dst || src_width <= 0 || src_height <= 0) return -1;
    if (src_width > KILN_RESAMPLE_MAX_SIDE || src_height > KILN_RESAMPLE_MAX_SIDE) return -1;
    if (channels != 3 && channels != 4) return -1;
    if (alpha != KILN_RESAMPLE_ALPHA_NONE && channels != 4) return -1;
    if (!valid_axis(horizontal, src_width) || !valid_axis(vertical, src_height)) return -1;
    if ((int64_t)horizontal->count * channels > (1 << 28)) return -1;

    int avx2 = (path == KILN_RESAMPLE_AUTO || path == KILN_RESAMPLE_AVX2) && kiln_resample_has_avx2();

    kr_context k;
    memset(&k, 0, sizeof k);
    k.channels = channels;
    k.alpha = alpha;
    k.out_width = horizontal->count;
    k.h_taps = (horizontal->taps + 3) / 4 * 4;
    k.first_column = horizontal->starts[0];
    k.column_count = horizontal->starts[horizontal->count - 1] + horizontal->taps - k.first_column;
    k.row_length = k.out_width * channels;
    k.row_stride = (k.row_length + 4 + 15) / 16 * 16;
    int v_taps = vertical->taps;

    k.h_starts = malloc(sizeof(int32_t) * (size_t)k.out_width);
    k.h_weights = calloc((size_t)k.out_width * k.h_taps, sizeof(int16_t));
    k.wide_stride = (k.column_count + 16) * 4;
    k.wide = calloc((size_t)KR_BATCH * k.wide_stride, sizeof(int16_t));
    k.acc = malloc(sizeof(int32_t) * (size_t)k.row_stride);
    // The ring holds the rows the current window reads plus up to KR_BATCH - 1 filtered ahead.
    const int ring_rows = v_taps + KR_BATCH - 1;
    int16_t *ring = calloc((size_t)ring_rows * k.row_stride, sizeof(int16_t));
    const int16_t **window = malloc(sizeof(int16_t *) * (size_t)(v_taps + 1));
    int result = avx2 ? KILN_RESAMPLE_AVX2 : KILN_RESAMPLE_PORTABLE;
    if (!k.h_starts || !k.h_weights || !k.wide || !k.acc || !ring || !window) {
        result = -2;
        goto done;
    }
    for (int x = 0; x < k.out_width; x++) {
        k.h_starts[x] = horizontal->starts[x] - k.first_column;
        memcpy(k.h_weights + (size_t)x * k.h_taps, horizontal->weights + (size_t)x * horizontal->taps,
               sizeof(int16_t) * (size_t)horizontal->taps);
    }

    const size_t src_row_bytes = (size_t)src_width * channels;
    const int rows_end = vertical->starts[vertical->count - 1] + v_taps;  // one past the last row read
    const size_t src_bytes = (size_t)src_height * src_row_bytes;
    // Bytes from a row's start that kr_horizontal4_u8_avx2 may read: up to the last padded tap's
    // pixel, plus the rest of its 16-byte load.
    const size_t u8_row_reach = (size_t)(k.first_column + k.column_count + (k.h_taps - horizontal->taps) + 4) * channels + 16;
    int next = 0;  // next source row to filter horizontally
    for (int y = 0; y < vertical->count; y++) {
        int start = vertical->starts[y];
        if (next < start) next = start;
        // Row r lives in slot r % ring_rows. Rows are filtered KR_BATCH at a time while the
        // batch stays within the rows the image needs and within KR_BATCH - 1 rows past the
        // window (so no row the window reads is overwritten), else one at a time.
        while (next < start + v_taps) {
            int16_t *slots[KR_BATCH];
            const int16_t *wides[KR_BATCH];
            if (avx2 && next + KR_BATCH <= rows_end && next + KR_BATCH <= start + ring_rows) {
                // Straight from the bytes where widening is a shift and the step's 16-byte reads
                // past the last column stay inside the source (every batch but the image's last).
                if (alpha != KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND &&
                    (size_t)(next + KR_BATCH - 1) * src_row_bytes + u8_row_reach <= src_bytes) {
                    const uint8_t *rows[KR_BATCH];
                    for (int b = 0; b < KR_BATCH; b++) {
                        rows[b] = src + (size_t)(next + b) * src_row_bytes + (size_t)k.first_column * channels;
                        slots[b] = ring + (size_t)((next + b) % ring_rows) * k.row_stride;
                    }
                    kr_horizontal4_u8_avx2(&k, rows, slots);
                    next += KR_BATCH;
                    continue;
                }
                for (int b = 0; b < KR_BATCH; b++) {
                    int16_t *wide = k.wide + (size_t)b * k.wide_stride;
                    kr_widen_avx2(&k, src + (size_t)(next + b) * src_row_bytes, wide);
                    wides[b] = wide;
                    slots[b] = ring + (size_t)((next + b) % ring_rows) * k.row_stride;
                }
                kr_horizontal4_avx2(&k, wides, slots);
                next += KR_BATCH;
                continue;
            }
            const uint8_t *row = src + (size_t)next * src_row_bytes;
            int16_t *slot = ring + (size_t)(next % ring_rows) * k.row_stride;
            if (avx2) {
                kr_widen_avx2(&k, row, k.wide);
                kr_horizontal_avx2(&k, k.wide, slot);
            } else {
                kr_widen_portable(&k, row, k.wide);
                kr_horizontal_portable(&k, k.wide, slot);
            }
            next++;
        }
        for (int t = 0; t < v_taps; t++) window[t] = ring + (size_t)((start + t) % ring_rows) * k.row_stride;
        const int16_t *weights = vertical->weights + (size_t)y * v_taps;
        uint8_t *out = dst + (size_t)y * k.row_length;
        if (avx2) {
            kr_vertical_avx2(&k, window, weights, v_taps, k.acc, out);
            if (alpha == KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND) kr_store_straight_avx2(&k, k.acc, out);
            else if (alpha != KILN_RESAMPLE_ALPHA_NONE) kr_store_portable(&k, k.acc, out);
        } else {
            kr_vertical_portable(&k, window, weights, v_taps, k.acc);
            kr_store_portable(&k, k.acc, out);
        }
    }

done:
    free(k.h_starts);
    free(k.h_weights);
    free(k.wide);
    free(k.acc);
    free(ring);
    free(window);
    return result;
}
