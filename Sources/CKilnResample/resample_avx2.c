// The AVX2 path of kiln_resample_u8: the portable path's arithmetic, 16 int16 lanes at a time
// (vpmaddwd: pairs of int16 products summed into int32). Compiled for AVX2 function by function,
// so the rest of the target runs on any x86-64; the driver calls these only when the CPU has it.
#include <string.h>
#include "kiln_resample.h"
#include "resample_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define KR_AVX2 __attribute__((target("avx2")))

KR_AVX2 void kr_widen_avx2(const kr_context *k, const uint8_t *src_row, int16_t *w) {
    const uint8_t *s = src_row + (size_t)k->first_column * k->channels;
    if (k->alpha == KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND) {
        // round(v * a * 128 / 255) = floor((128x + 127) / 255) for x = v * a, in 16-bit lanes:
        // x = 255k + r with k = x / 255, then 128k + (128r + 127) / 255; each division by 255
        // of a 16-bit value is (y * 0x8081) >> 23 (exact, checked for every x <= 65025).
        const __m128i alphas = _mm_setr_epi8(3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15);
        const __m256i magic = _mm256_set1_epi16((short)0x8081);
        const __m256i c255 = _mm256_set1_epi16(255);
        const __m256i c127 = _mm256_set1_epi16(127);
        const int n = k->column_count;
        int i = 0;
        for (; i + 4 <= n; i += 4) {
            __m128i bytes = _mm_loadu_si128((const __m128i *)(s + 4 * i));
            __m256i v = _mm256_cvtepu8_epi16(bytes);
            __m256i a = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(bytes, alphas));
            __m256i x = _mm256_mullo_epi16(v, a);
            __m256i q = _mm256_srli_epi16(_mm256_mulhi_epu16(x, magic), 7);
            __m256i r = _mm256_sub_epi16(x, _mm256_mullo_epi16(q, c255));
            __m256i y = _mm256_add_epi16(_mm256_slli_epi16(r, 7), c127);
            __m256i m = _mm256_srli_epi16(_mm256_mulhi_epu16(y, magic), 7);
            __m256i out = _mm256_add_epi16(_mm256_slli_epi16(q, KR_SOURCE_BITS), m);
            out = _mm256_blend_epi16(out, _mm256_slli_epi16(a, KR_SOURCE_BITS), 0x88);
            _mm256_storeu_si256((__m256i *)(w + 4 * i), out);
        }
        for (; i < n; i++) {
            uint32_t a = s[4 * i + 3];
            for (int c = 0; c < 3; c++) {
                uint32_t v = (uint32_t)s[4 * i + c] * a << KR_SOURCE_BITS;
                w[4 * i + c] = (int16_t)((v + 127) / 255);
            }
            w[4 * i + 3] = (int16_t)(a << KR_SOURCE_BITS);
        }
        return;
    }
    const int n = k->column_count;
    int i = 0;
    if (k->channels == 3) {
        // Four RGB pixels (12 bytes) to four RGB0 pixels; a load reads 16 bytes, so stop while
        // the last one would read past the row.
        const __m128i spread = _mm_setr_epi8(0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1);
        for (; (i + 4) * 3 + 4 <= n * 3; i += 4) {
            __m128i v = _mm_loadu_si128((const __m128i *)(s + 3 * i));
            __m256i x = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(v, spread));
            _mm256_storeu_si256((__m256i *)(w + 4 * i), _mm256_slli_epi16(x, KR_SOURCE_BITS));
        }
        for (; i < n; i++) {
            w[4 * i] = (int16_t)(s[3 * i] << KR_SOURCE_BITS);
            w[4 * i + 1] = (int16_t)(s[3 * i + 1] << KR_SOURCE_BITS);
            w[4 * i + 2] = (int16_t)(s[3 * i + 2] << KR_SOURCE_BITS);
            w[4 * i + 3] = 0;
        }
        return;
    }
    const int total = n * 4;  // RGBA as it is
    for (; i + 16 <= total; i += 16) {
        __m256i x = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_si256((__m256i *)(w + i), _mm256_slli_epi16(x, KR_SOURCE_BITS));
    }
    for (; i < total; i++) w[i] = (int16_t)(s[i] << KR_SOURCE_BITS);
}

KR_AVX2 void kr_horizontal_avx2(const kr_context *k, const int16_t *wide, int16_t *out) {
    const int taps = k->h_taps;
    const __m128i round = _mm_set1_epi32(1 << (KR_H_SHIFT - 1));
    // Four-channel pixels, four taps a step: each 128-bit lane holds two pixels, interleaved to
    // (r0 r1 g0 g1 b0 b1 a0 a1) so one vpmaddwd with (w0 w1) repeated gives two taps' sums.
    const __m256i interleave = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                                0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    const __m256i pairs = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const int C = k->channels;
    for (int x = 0; x < k->out_width; x++) {
        const int16_t *p = wide + (size_t)k->h_starts[x] * 4;
        const int16_t *w = k->h_weights + (size_t)x * taps;
        __m256i acc0 = _mm256_setzero_si256();
        __m256i acc1 = _mm256_setzero_si256();
        int t = 0;
        for (; t + 8 <= taps; t += 8) {
            __m256i pa = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 4 * t)), interleave);
            __m256i pb = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 4 * t + 16)), interleave);
            __m256i wa = _mm256_permutevar8x32_epi32(
                _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(w + t))), pairs);
            __m256i wb = _mm256_permutevar8x32_epi32(
                _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(w + t + 4))), pairs);
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(pa, wa));
            acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(pb, wb));
        }
        if (t < taps) {  // taps is a multiple of 4
            __m256i pa = _mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p + 4 * t)), interleave);
            __m256i wa = _mm256_permutevar8x32_epi32(
                _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(w + t))), pairs);
            acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(pa, wa));
        }
        __m256i acc = _mm256_add_epi32(acc0, acc1);
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
        s = _mm_srai_epi32(_mm_add_epi32(s, round), KR_H_SHIFT);
        // Eight bytes even for RGB: the next pixel's store overwrites the fourth (the row has room).
        _mm_storel_epi64((__m128i *)(out + (size_t)x * C), _mm_packs_epi32(s, s));
    }
}

// The four rows' sums of one output pixel (each 256-bit accumulator: two 128-bit halves to add),
// rounded, shifted, saturated to int16 and stored at out[r] + o (eight bytes each: for RGB the
// next pixel's store overwrites the fourth value).
static inline KR_AVX2 void kr_store4_avx2(__m256i a0, __m256i a1, __m256i a2, __m256i a3, __m128i round, int shift,
                                          int16_t *const *out, size_t o) {
    // Lane sums: rows 0 and 1 side by side, then rows 2 and 3.
    __m256i s01 = _mm256_add_epi32(_mm256_permute2x128_si256(a0, a1, 0x20), _mm256_permute2x128_si256(a0, a1, 0x31));
    __m256i s23 = _mm256_add_epi32(_mm256_permute2x128_si256(a2, a3, 0x20), _mm256_permute2x128_si256(a2, a3, 0x31));
    const __m256i round2 = _mm256_broadcastsi128_si256(round);
    const __m128i count = _mm_cvtsi32_si128(shift);
    s01 = _mm256_sra_epi32(_mm256_add_epi32(s01, round2), count);
    s23 = _mm256_sra_epi32(_mm256_add_epi32(s23, round2), count);
    __m256i words = _mm256_packs_epi32(s01, s23);  // lane 0: rows 0, 2; lane 1: rows 1, 3
    __m128i lo = _mm256_castsi256_si128(words), hi = _mm256_extracti128_si256(words, 1);
    _mm_storel_epi64((__m128i *)(out[0] + o), lo);
    _mm_storel_epi64((__m128i *)(out[2] + o), _mm_unpackhi_epi64(lo, lo));
    _mm_storel_epi64((__m128i *)(out[1] + o), hi);
    _mm_storel_epi64((__m128i *)(out[3] + o), _mm_unpackhi_epi64(hi, hi));
}

KR_AVX2 void kr_horizontal4_avx2(const kr_context *k, const int16_t *const *wide, int16_t *const *out) {
    const int taps = k->h_taps;
    const __m128i round = _mm_set1_epi32(1 << (KR_H_SHIFT - 1));
    const __m256i interleave = _mm256_setr_epi8(0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15,
                                                0, 1, 8, 9, 2, 3, 10, 11, 4, 5, 12, 13, 6, 7, 14, 15);
    const __m256i pairs = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const int C = k->channels;
    const int16_t *w0 = wide[0], *w1 = wide[1], *w2 = wide[2], *w3 = wide[3];
    for (int x = 0; x < k->out_width; x++) {
        const size_t offset = (size_t)k->h_starts[x] * 4;
        const int16_t *p0 = w0 + offset, *p1 = w1 + offset, *p2 = w2 + offset, *p3 = w3 + offset;
        const int16_t *w = k->h_weights + (size_t)x * taps;
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < taps; t += 4) {
            __m256i wv = _mm256_permutevar8x32_epi32(
                _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(w + t))), pairs);
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p0 + 4 * t)), interleave), wv));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p1 + 4 * t)), interleave), wv));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p2 + 4 * t)), interleave), wv));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_loadu_si256((const __m256i *)(p3 + 4 * t)), interleave), wv));
        }
        kr_store4_avx2(a0, a1, a2, a3, round, KR_H_SHIFT, out, (size_t)x * C);
    }
}

KR_AVX2 void kr_horizontal4_u8_avx2(const kr_context *k, const uint8_t *const *src, int16_t *const *out) {
    // kr_horizontal4_avx2 without the widening pass, for rows whose widening is only the shift
    // (every alpha mode but premultiply-around): the bytes are zero-extended by the shuffle that
    // interleaves them. (sum(w * v) + 2^7) >> 8 is (sum(w * (v << 7)) + 2^14) >> 15 exactly, the
    // portable path's value. A step reads 16 bytes from the fourth tap's pixel; the driver calls
    // this only where those bytes are inside the source.
    const int taps = k->h_taps;
    const int C = k->channels;
    const __m128i round = _mm_set1_epi32(1 << (KR_H_SHIFT - KR_SOURCE_BITS - 1));
    // Per 128-bit lane two pixels as 16-bit (c0 of pixel 0, c0 of pixel 1, c1, c1, ...); lane 0
    // pixels 0 and 1, lane 1 pixels 2 and 3 of the four a step covers. -1: a zero byte.
    const __m256i spread = C == 3
        ? _mm256_setr_epi8(0, -1, 3, -1, 1, -1, 4, -1, 2, -1, 5, -1, -1, -1, -1, -1,
                           6, -1, 9, -1, 7, -1, 10, -1, 8, -1, 11, -1, -1, -1, -1, -1)
        : _mm256_setr_epi8(0, -1, 4, -1, 1, -1, 5, -1, 2, -1, 6, -1, 3, -1, 7, -1,
                           8, -1, 12, -1, 9, -1, 13, -1, 10, -1, 14, -1, 11, -1, 15, -1);
    const __m256i pairs = _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1);
    const uint8_t *r0 = src[0], *r1 = src[1], *r2 = src[2], *r3 = src[3];
    for (int x = 0; x < k->out_width; x++) {
        const size_t offset = (size_t)k->h_starts[x] * C;
        const uint8_t *p0 = r0 + offset, *p1 = r1 + offset, *p2 = r2 + offset, *p3 = r3 + offset;
        const int16_t *w = k->h_weights + (size_t)x * taps;
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
        for (int t = 0; t < taps; t += 4) {
            __m256i wv = _mm256_permutevar8x32_epi32(
                _mm256_castsi128_si256(_mm_loadl_epi64((const __m128i *)(w + t))), pairs);
            const size_t o = (size_t)t * C;
            a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p0 + o))), spread), wv));
            a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p1 + o))), spread), wv));
            a2 = _mm256_add_epi32(a2, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p2 + o))), spread), wv));
            a3 = _mm256_add_epi32(a3, _mm256_madd_epi16(_mm256_shuffle_epi8(_mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)(p3 + o))), spread), wv));
        }
        kr_store4_avx2(a0, a1, a2, a3, round, KR_H_SHIFT - KR_SOURCE_BITS, out, (size_t)x * C);
    }
}

KR_AVX2 void kr_store_straight_avx2(const kr_context *k, const int32_t *acc, uint8_t *dst) {
    // kr_store_portable's straight-alpha step, two pixels a time, with the same float operations
    // in the same order (IEEE division, multiply, add: the same bytes).
    const int n = k->row_length;
    const __m256i alpha_index = _mm256_setr_epi32(3, 3, 3, 3, 7, 7, 7, 7);
    const __m256i half = _mm256_set1_epi32(1 << (KR_V_SHIFT - 1));
    const __m256i limit = _mm256_set1_epi32(1 << (KR_V_SHIFT - 1));  // alpha below: byte 0
    const __m256 f255 = _mm256_set1_ps(255.0f);
    const __m256 zero = _mm256_setzero_ps();
    const __m256 point5 = _mm256_set1_ps(0.5f);
    const __m256i is_alpha = _mm256_setr_epi32(0, 0, 0, -1, 0, 0, 0, -1);
    int i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(acc + i));
        __m256i alpha = _mm256_permutevar8x32_epi32(v, alpha_index);
        __m256 f = _mm256_div_ps(f255, _mm256_cvtepi32_ps(alpha));
        __m256 c = _mm256_add_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(v), f), point5);
        c = _mm256_min_ps(_mm256_max_ps(c, zero), f255);
        __m256i colour = _mm256_cvttps_epi32(c);
        __m256i a = _mm256_srai_epi32(_mm256_add_epi32(v, half), KR_V_SHIFT);
        a = _mm256_min_epi32(_mm256_max_epi32(a, _mm256_setzero_si256()), _mm256_set1_epi32(255));
        __m256i out = _mm256_blendv_epi8(colour, a, is_alpha);
        __m256i transparent = _mm256_cmpgt_epi32(limit, alpha);   // alpha < 2^19: all zero
        out = _mm256_andnot_si256(transparent, out);
        __m256i w16 = _mm256_packus_epi32(out, out);
        __m256i b8 = _mm256_packus_epi16(w16, w16);
        uint32_t lo = (uint32_t)_mm256_extract_epi32(b8, 0), hi = (uint32_t)_mm256_extract_epi32(b8, 4);
        memcpy(dst + i, &lo, 4);
        memcpy(dst + i + 4, &hi, 4);
    }
    if (i < n) {
        kr_context tail = *k;
        tail.row_length = n - i;
        kr_store_portable(&tail, acc + i, dst + i);
    }
}

KR_AVX2 void kr_vertical_avx2(const kr_context *k, const int16_t *const *rows, const int16_t *weights,
                              int taps, int32_t *acc, uint8_t *dst) {
    const int n = k->row_stride;  // a multiple of 16; rows are that long
    const int bytes = k->alpha == KILN_RESAMPLE_ALPHA_NONE;
    const __m256i round = _mm256_set1_epi32(1 << (KR_V_SHIFT - 1));
    // The weights as (w[t], w[t + 1]) pairs, one int32 each, and the row pairs they weigh: the
    // odd last tap pairs with itself at weight 0.
    int32_t pair_stack[64];
    const int16_t *first_stack[64], *second_stack[64];
    const int pairs = (taps + 1) / 2;
    if (pairs > 64) {  // very long windows (extreme downscales): two taps at a time, no table
        for (int i = 0; i < n; i += 16) {
            __m256i lo = _mm256_setzero_si256(), hi = _mm256_setzero_si256();
            for (int t = 0; t < taps; t += 2) {
                const int16_t *ra = rows[t] + i;
                const int16_t *rb = t + 1 < taps ? rows[t + 1] + i : ra;
                int32_t pair = (uint16_t)weights[t] | (int32_t)((uint32_t)(uint16_t)(t + 1 < taps ? weights[t + 1] : 0) << 16);
                __m256i wv = _mm256_set1_epi32(pair);
                __m256i a = _mm256_loadu_si256((const __m256i *)ra);
                __m256i b = _mm256_loadu_si256((const __m256i *)rb);
                lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wv));
                hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wv));
            }
            _mm256_storeu_si256((__m256i *)(acc + i), _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_storeu_si256((__m256i *)(acc + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
        }
        if (bytes) kr_store_portable(k, acc, dst);
        return;
    }
    for (int j = 0; j < pairs; j++) {
        int t = 2 * j;
        first_stack[j] = rows[t];
        second_stack[j] = t + 1 < taps ? rows[t + 1] : rows[t];
        pair_stack[j] = (uint16_t)weights[t] | (int32_t)((uint32_t)(uint16_t)(t + 1 < taps ? weights[t + 1] : 0) << 16);
    }
    for (int i = 0; i < n; i += 16) {
        __m256i lo = _mm256_setzero_si256();
        __m256i hi = _mm256_setzero_si256();
        for (int j = 0; j < pairs; j++) {
            __m256i wv = _mm256_set1_epi32(pair_stack[j]);
            __m256i a = _mm256_loadu_si256((const __m256i *)(first_stack[j] + i));
            __m256i b = _mm256_loadu_si256((const __m256i *)(second_stack[j] + i));
            lo = _mm256_add_epi32(lo, _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wv));
            hi = _mm256_add_epi32(hi, _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wv));
        }
        if (!bytes) {
            // unpacklo/hi work per 128-bit lane: lo holds 0-3 and 8-11, hi 4-7 and 12-15.
            _mm256_storeu_si256((__m256i *)(acc + i), _mm256_permute2x128_si256(lo, hi, 0x20));
            _mm256_storeu_si256((__m256i *)(acc + i + 8), _mm256_permute2x128_si256(lo, hi, 0x31));
            continue;
        }
        if (i >= k->row_length) break;
        lo = _mm256_srai_epi32(_mm256_add_epi32(lo, round), KR_V_SHIFT);
        hi = _mm256_srai_epi32(_mm256_add_epi32(hi, round), KR_V_SHIFT);
        __m256i words = _mm256_packs_epi32(lo, hi);            // 0-7 | 8-15, in order
        __m256i b8 = _mm256_packus_epi16(words, words);        // clamps to 0...255
        __m128i out = _mm256_castsi256_si128(_mm256_permute4x64_epi64(b8, _MM_SHUFFLE(3, 1, 2, 0)));
        if (i + 16 <= k->row_length) {
            _mm_storeu_si128((__m128i *)(dst + i), out);
        } else {
            uint8_t tail[16];
            _mm_storeu_si128((__m128i *)tail, out);
            memcpy(dst + i, tail, (size_t)(k->row_length - i));
        }
    }
}

#else  // not x86: never called (kiln_resample_has_avx2 is 0)
void kr_widen_avx2(const kr_context *k, const uint8_t *src_row, int16_t *wide) { kr_widen_portable(k, src_row, wide); }
void kr_horizontal_avx2(const kr_context *k, const int16_t *wide, int16_t *out) { kr_horizontal_portable(k, wide, out); }
void kr_store_straight_avx2(const kr_context *k, const int32_t *acc, uint8_t *dst) { kr_store_portable(k, acc, dst); }
void kr_horizontal4_avx2(const kr_context *k, const int16_t *const *wide, int16_t *const *out) {
    for (int b = 0; b < KR_BATCH; b++) kr_horizontal_portable(k, wide[b], out[b]);
}
void kr_horizontal4_u8_avx2(const kr_context *k, const uint8_t *const *src, int16_t *const *out) {
    for (int b = 0; b < KR_BATCH; b++) {
        kr_widen_portable(k, src[b] - (size_t)k->first_column * k->channels, k->wide);
        kr_horizontal_portable(k, k->wide, out[b]);
    }
}
void kr_vertical_avx2(const kr_context *k, const int16_t *const *rows, const int16_t *weights,
                      int taps, int32_t *acc, uint8_t *dst) {
    kr_vertical_portable(k, rows, weights, taps, acc);
    if (k->alpha == KILN_RESAMPLE_ALPHA_NONE) kr_store_portable(k, acc, dst);
}
#endif
