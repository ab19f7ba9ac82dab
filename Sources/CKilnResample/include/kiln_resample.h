#ifndef KILN_RESAMPLE_H
#define KILN_RESAMPLE_H

#include <stdint.h>

/// Fixed-point separable resampling of 8-bit pixels (RGB, RGBA), the kernel behind
/// KilnProcessing's `Resampler`. The weights come from Swift (`WeightTable`), quantised to
/// `KILN_RESAMPLE_WEIGHT_BITS` fractional bits with every row summing to exactly 1.
///
/// Arithmetic (the same on every path, so the paths agree bit for bit):
///   source byte v -> v << 7 (straight RGBA: round(v * a * 128 / 255), alpha a << 7)
///   horizontal: sum(w * x) in int32, rounded >> 15       -> int16 with 6 fractional bits
///   vertical:   sum(w * row) in int32                    -> 20 fractional bits
///   output: rounded >> 20, clamped to 0...255 (straight RGBA: colour * 255 / unclamped alpha;
///   premultiplied RGBA: colour clamped to alpha). Straight RGBA's colour is thereby exact to
///   about 3 / alpha: a copied pixel keeps its colour from alpha 8 up, and may move by up to 3
///   below (alpha 1...7 of 255: invisible).

#define KILN_RESAMPLE_WEIGHT_BITS 14

/// The most a row of weights may add up to in absolute value: 2.0, which keeps every int32
/// sum and its rounding in range.
#define KILN_RESAMPLE_MAX_WEIGHT_SUM (2 << KILN_RESAMPLE_WEIGHT_BITS)

/// The longest side, source or output, `kiln_resample_u8` takes (16,777,216 pixels): every
/// int offset and row length it computes stays in range.
#define KILN_RESAMPLE_MAX_SIDE (1 << 24)

/// What `kiln_resample_u8` runs.
enum {
    KILN_RESAMPLE_AUTO = 0,      ///< AVX2 where the CPU has it, else portable (the same bytes)
    KILN_RESAMPLE_PORTABLE = 1,  ///< plain C
    KILN_RESAMPLE_AVX2 = 2,      ///< AVX2 (falls back to portable without it)
    KILN_RESAMPLE_FLOAT = 3,     ///< not run here: Swift's float reference (`debug.resampler = "float"`)
};

/// How colour relates to alpha (4 channels only).
enum {
    KILN_RESAMPLE_ALPHA_NONE = 0,               ///< filter the bytes as they are
    KILN_RESAMPLE_ALPHA_KEEP_PREMULTIPLIED = 1, ///< premultiplied: colour clamped to alpha after
    KILN_RESAMPLE_ALPHA_PREMULTIPLY_AROUND = 2, ///< straight: premultiply in, unpremultiply out
};

/// One axis: output pixel i reads `taps` source pixels from `starts[i]`, weighted by
/// `weights[i * taps ..< (i + 1) * taps]`. Starts never decrease; starts[i] + taps <= source length.
typedef struct {
    int32_t count;
    int32_t taps;
    const int32_t *starts;
    const int16_t *weights;
} kiln_resample_axis;

/// Resamples a tightly packed `src_width` x `src_height` image of `channels` (3 or 4) bytes a
/// pixel into `dst` (horizontal->count x vertical->count pixels, tightly packed).
/// Weights of a row may add up to at most 2.0 in absolute value (KILN_RESAMPLE_MAX_WEIGHT_SUM),
/// and no side may exceed KILN_RESAMPLE_MAX_SIDE.
/// Returns the path that ran (KILN_RESAMPLE_PORTABLE or KILN_RESAMPLE_AVX2), or -1 for bad
/// arguments, -2 when scratch memory could not be allocated.
int kiln_resample_u8(const uint8_t *src, int32_t src_width, int32_t src_height, int32_t channels,
                     int32_t alpha, const kiln_resample_axis *horizontal,
                     const kiln_resample_axis *vertical, uint8_t *dst, int32_t path);

/// 1 when this CPU runs the AVX2 path.
int kiln_resample_has_avx2(void);

/// The path `Resampler()` runs in this process: KILN_RESAMPLE_AUTO unless
/// `kiln_resample_set_default_path` chose another (a worker applies `debug.resampler` at start).
int kiln_resample_default_path(void);

/// Sets the process's path (one of the four values above; anything else is ignored).
void kiln_resample_set_default_path(int path);

#endif
