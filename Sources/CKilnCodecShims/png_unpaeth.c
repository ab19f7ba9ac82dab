/* PNG's Paeth filter reversed for two RGBA rows at once (a measured kernel: see
 * include/kiln_png.h and PNGUnfilter.swift). Row y at pixel i and row y+1 at pixel i-1 share one
 * SSE2 register of eight 16-bit lanes: row y+1 needs from row y only pixels made one step earlier
 * (its up pixel is row y's previous result, its upper-left the one before), so the two chains of
 * the predictor (about ten dependent operations a pixel) run in the same instructions. SSE2 is part
 * of x86-64; other machines get the same arithmetic one byte at a time. */
#include "kiln_png.h"
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static unsigned char kiln_paeth_byte(int a, int b, int c) {
    int p = b - c, q = a - c;
    int pa = p < 0 ? -p : p, pb = q < 0 ? -q : q, pc = p + q < 0 ? -(p + q) : p + q;
    if (pa <= pb && pa <= pc) return (unsigned char)a;
    return (unsigned char)(pb <= pc ? b : c);
}

/* Row y+1's pixel at `j` (4 bytes) from its left pixel, and row y's results above. */
static void kiln_unpaeth_pixel(unsigned char *d1, const unsigned char *s1, const unsigned char *d0, size_t j) {
    for (size_t k = 0; k < 4; k++) {
        int a = j >= 4 ? d1[j - 4 + k] : 0, b = d0[j + k], c = j >= 4 ? d0[j - 4 + k] : 0;
        d1[j + k] = (unsigned char)(s1[j + k] + kiln_paeth_byte(a, b, c));
    }
}

#if defined(__SSE2__)
static inline __m128i kiln_load4(const unsigned char *p) {
    int v;
    memcpy(&v, p, 4);
    return _mm_cvtsi32_si128(v);
}

static inline void kiln_store4(unsigned char *p, __m128i v) {
    int t = _mm_cvtsi128_si32(v);
    memcpy(p, &t, 4);
}

static inline __m128i kiln_abs16(__m128i x) {
    return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x));
}

static inline __m128i kiln_select(__m128i mask, __m128i yes, __m128i no) {
    return _mm_or_si128(_mm_and_si128(mask, yes), _mm_andnot_si128(mask, no));
}
#endif

void kiln_png_unpaeth4_pair(unsigned char *d0, const unsigned char *s0, const unsigned char *prev,
                            unsigned char *d1, const unsigned char *s1, size_t n) {
    /* Row y's first pixel: a = c = 0, the predictor is b. */
    for (size_t k = 0; k < 4; k++) d0[k] = (unsigned char)(s0[k] + prev[k]);
    size_t i = 4;
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128(), low = _mm_set1_epi16(0xFF);
    /* Lanes 0-3: row y (a = its left result, c = prev's upper left); lanes 4-7: row y+1, which
     * starts one step later with a = c = 0. */
    __m128i a = _mm_unpacklo_epi8(kiln_load4(d0), zero);
    __m128i c = _mm_unpacklo_epi8(kiln_load4(prev), zero);
    for (; i + 4 <= n; i += 4) {
        /* b: prev's pixel above row y's, and row y's previous result above row y+1's. */
        __m128i b = _mm_unpacklo_epi64(_mm_unpacklo_epi8(kiln_load4(prev + i), zero), a);
        __m128i s = _mm_unpacklo_epi8(_mm_unpacklo_epi32(kiln_load4(s0 + i), kiln_load4(s1 + i - 4)), zero);
        __m128i p = _mm_sub_epi16(b, c), q = _mm_sub_epi16(a, c);
        __m128i pc = kiln_abs16(_mm_add_epi16(p, q));
        __m128i pa = kiln_abs16(p), pb = kiln_abs16(q);
        __m128i smallest = _mm_min_epi16(pc, _mm_min_epi16(pa, pb));
        __m128i pred = kiln_select(_mm_cmpeq_epi16(smallest, pa), a,
                                   kiln_select(_mm_cmpeq_epi16(smallest, pb), b, c));
        a = _mm_and_si128(_mm_add_epi16(s, pred), low);
        __m128i bytes = _mm_packus_epi16(a, zero);
        kiln_store4(d0 + i, bytes);
        kiln_store4(d1 + i - 4, _mm_srli_si128(bytes, 4));
        c = b;
    }
#else
    for (; i + 4 <= n; i += 4) {
        for (size_t k = 0; k < 4; k++) {
            d0[i + k] = (unsigned char)(s0[i + k] + kiln_paeth_byte(d0[i - 4 + k], prev[i + k], prev[i - 4 + k]));
        }
        kiln_unpaeth_pixel(d1, s1, d0, i - 4);
    }
#endif
    /* Row y+1's last pixel, below row y's last result. */
    kiln_unpaeth_pixel(d1, s1, d0, n - 4);
}
