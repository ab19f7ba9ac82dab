import Glibc

/// The contributions of source pixels to each output pixel along one axis, as a flat table.
///
/// Output pixel `i` reads `taps` consecutive source pixels starting at `starts[i]`, weighted by
/// `weights[i * taps ..< (i + 1) * taps]`. Every row of weights sums to 1, taps that fall outside
/// the source are folded onto the nearest edge pixel (edge clamping), and rows shorter than
/// `taps` are padded with zero weights so the inner loops have a fixed trip count.
package struct WeightTable: Sendable, Equatable {
    /// Radius of the Lanczos window, in source pixels at scale 1.
    static let lanczosRadius = 3.0

    /// Number of output pixels.
    let count: Int
    /// Weights per output pixel (the same for every output pixel).
    let taps: Int
    /// First source index read by each output pixel; `starts[i] + taps <= sourceLength`.
    let starts: [Int]
    /// `count * taps` normalised weights.
    let weights: [Float]

    /// Lowest and one-past-highest source index any output pixel reads.
    var sourceRange: Range<Int> {
        guard count > 0 else { return 0..<0 }
        return starts[0]..<(starts[count - 1] + taps)
    }

    /// Fractional bits of `fixedPointWeights` (CKilnResample's `KILN_RESAMPLE_WEIGHT_BITS`).
    static let fixedPointBits = 14

    /// `weights` in fixed point for CKilnResample: each rounded to `fixedPointBits` fractional
    /// bits, then the row's largest weight takes the rounding residue so every row sums to
    /// exactly `1 << fixedPointBits` (a flat colour stays exactly flat).
    var fixedPointWeights: [Int16] {
        let one = 1 << Self.fixedPointBits
        var out = [Int16](repeating: 0, count: weights.count)
        for i in 0..<count {
            let base = i * taps
            var sum = 0
            var largest = base
            for t in base..<(base + taps) {
                let q = min(max(Int((Double(weights[t]) * Double(one)).rounded()), -32768), 32767)
                out[t] = Int16(q)
                sum += q
                if weights[t] > weights[largest] { largest = t }
            }
            out[largest] = Int16(min(max(Int(out[largest]) + one - sum, -32768), 32767))
        }
        return out
    }

    /// True when the table copies the source unchanged (one tap of weight 1 at `start == i`).
    var isIdentity: Bool {
        taps == 1 && starts.enumerated().allSatisfy { $0.offset == $0.element }
    }

    /// The Lanczos-3 kernel: `sinc(x) * sinc(x / 3)` inside `|x| < 3`, 0 outside.
    static func lanczos3(_ x: Double) -> Double {
        let ax = abs(x)
        if ax < 1e-9 { return 1 }
        if ax >= lanczosRadius { return 0 }
        let px = Double.pi * x
        return lanczosRadius * sin(px) * sin(px / lanczosRadius) / (px * px)
    }

    /// Builds the table that maps `[origin, origin + extent)` of a source axis of
    /// `sourceLength` pixels onto `outputLength` pixels.
    ///
    /// When downscaling the kernel is stretched by the scale factor, so every source pixel
    /// contributes (antialiasing); when upscaling it keeps its natural width.
    package init(sourceLength: Int, origin: Double, extent: Double, outputLength: Int) {
        precondition(sourceLength > 0 && outputLength > 0, "empty axis")
        precondition(extent > 0, "empty source region")
        count = outputLength

        // An exact copy: the common case of an axis that a resize leaves alone.
        if outputLength == sourceLength && origin == 0 && extent == Double(sourceLength) {
            taps = 1
            starts = Array(0..<outputLength)
            weights = [Float](repeating: 1, count: outputLength)
            return
        }

        let scale = extent / Double(outputLength)          // source pixels per output pixel
        let stretch = max(scale, 1)                          // kernel widening when downscaling
        let support = Self.lanczosRadius * stretch
        let last = sourceLength - 1

        // First pass: the clamped index range of every output pixel, to size the table.
        var lows = [Int](repeating: 0, count: outputLength)
        var highs = [Int](repeating: 0, count: outputLength)
        var maxTaps = 1
        for i in 0..<outputLength {
            let centre = origin + (Double(i) + 0.5) * scale
            // Source pixel j has its centre at j + 0.5; it contributes while |j + 0.5 - centre| < support.
            let lo = Int((centre - support - 0.5).rounded(.up))
            let hi = Int((centre + support - 0.5).rounded(.down))
            let clampedLo = min(max(lo, 0), last)
            let clampedHi = min(max(hi, 0), last)
            lows[i] = clampedLo
            highs[i] = max(clampedHi, clampedLo)
            maxTaps = max(maxTaps, highs[i] - lows[i] + 1)
        }
        let taps = min(maxTaps, sourceLength)
        self.taps = taps

        var starts = [Int](repeating: 0, count: outputLength)
        var weights = [Float](repeating: 0, count: outputLength * taps)
        var row = [Double](repeating: 0, count: taps)
        for i in 0..<outputLength {
            let centre = origin + (Double(i) + 0.5) * scale
            let lo = Int((centre - support - 0.5).rounded(.up))
            let hi = Int((centre + support - 0.5).rounded(.down))
            // Keep the window inside the source so every output pixel reads `taps` valid pixels.
            let start = min(lows[i], sourceLength - taps)
            starts[i] = start
            for t in 0..<taps { row[t] = 0 }
            var sum = 0.0
            if hi >= lo {
                for j in lo...hi {
                    let w = Self.lanczos3((Double(j) + 0.5 - centre) / stretch)
                    if w == 0 { continue }
                    let k = min(max(j, 0), last) - start       // edge clamping folds outside taps in
                    row[k] += w
                    sum += w
                }
            }
            if sum == 0 {
                // Cannot happen for a positive extent, but never divide by zero: nearest pixel.
                let nearest = min(max(Int(centre.rounded(.down)), 0), last)
                row[min(max(nearest - start, 0), taps - 1)] = 1
                sum = 1
            }
            let base = i * taps
            for t in 0..<taps { weights[base + t] = Float(row[t] / sum) }
        }
        self.starts = starts
        self.weights = weights
    }
}
