#ifndef KILN_RESAMPLE_INTERNAL_H
#define KILN_RESAMPLE_INTERNAL_H

#include <stdint.h>
#include "kiln_resample.h"

/// Bits of the widened source (v << 7), of the horizontal output (6: ringing reaches about
/// 1.13 x 255, and 7 bits would saturate it at 256, measured: 7 to 16 off the float reference on
/// photos) and the shifts between.
#define KR_SOURCE_BITS 7
#define KR_MID_BITS 6
#define KR_H_SHIFT (KILN_RESAMPLE_WEIGHT_BITS + KR_SOURCE_BITS - KR_MID_BITS)  /* 15 */
#define KR_V_SHIFT (KILN_RESAMPLE_WEIGHT_BITS + KR_MID_BITS)                   /* 20 */

/// Scratch and tables of one resample, shared by both paths.
typedef struct {
    int channels;       ///< 3 or 4 (source and output); widened rows have 4 (RGB0 for RGB)
    int alpha;
    int out_width;
    int h_taps;         ///< padded: a multiple of 4; padding weights are 0
    int first_column;
    int column_count;
    int32_t *h_starts;  ///< relative to first_column
    int16_t *h_weights; ///< out_width * h_taps
    int16_t *wide;      ///< KR_BATCH widened source rows, wide_stride apart, tails zero
    int wide_stride;    ///< int16 per widened row: (column_count + 16) * 4
    int row_length;     ///< out_width * channels
    int row_stride;     ///< int16 per intermediate row: >= row_length + 4, a multiple of 16
    int32_t *acc;       ///< row_stride int32: the vertical sums before the alpha step
} kr_context;

static inline int16_t kr_clamp16(int32_t v) {
    return (int16_t)(v < -32768 ? -32768 : (v > 32767 ? 32767 : v));
}

static inline uint8_t kr_byte(int32_t acc) {
    int32_t v = (acc + (1 << (KR_V_SHIFT - 1))) >> KR_V_SHIFT;
    return (uint8_t)(v < 0 ? 0 : (v > 255 ? 255 : v));
}

/// Rows the horizontal pass filters at once where it can (they share the weight loads).
#define KR_BATCH 4

/// Widens `src_row` into `wide` (one of the KR_BATCH rows of `k->wide`).
void kr_widen_portable(const kr_context *k, const uint8_t *src_row, int16_t *wide);
void kr_horizontal_portable(const kr_context *k, const int16_t *wide, int16_t *out);
void kr_vertical_portable(const kr_context *k, const int16_t *const *rows, const int16_t *weights,
                          int taps, int32_t *acc);
void kr_store_portable(const kr_context *k, const int32_t *acc, uint8_t *dst);

void kr_widen_avx2(const kr_context *k, const uint8_t *src_row, int16_t *wide);
void kr_horizontal_avx2(const kr_context *k, const int16_t *wide, int16_t *out);
/// kr_store_portable for straight alpha (the same bytes).
void kr_store_straight_avx2(const kr_context *k, const int32_t *acc, uint8_t *dst);
/// KR_BATCH rows at once.
void kr_horizontal4_avx2(const kr_context *k, const int16_t *const *wide, int16_t *const *out);
/// kr_horizontal4_avx2 straight from the source bytes (rows start at `first_column`), for the
/// alpha modes whose widening is a shift only; reads up to 16 bytes past a row's last column.
void kr_horizontal4_u8_avx2(const kr_context *k, const uint8_t *const *src, int16_t *const *out);
/// Alpha none: straight to bytes; otherwise the sums into `acc` (then kr_store_portable).
void kr_vertical_avx2(const kr_context *k, const int16_t *const *rows, const int16_t *weights,
                      int taps, int32_t *acc, uint8_t *dst);

#endif
