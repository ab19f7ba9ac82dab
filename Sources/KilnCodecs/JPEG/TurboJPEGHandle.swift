import CTurboJPEG
import KilnModel

/// One TurboJPEG compressor or decompressor handle, destroyed with its owner.
///
/// A handle is not thread-safe; each decode or encode call makes its own (a few microseconds,
/// against decode costs in milliseconds), so the codec values stay stateless and shareable.
final class TurboJPEGHandle {
    let raw: tjhandle

    private init(_ raw: tjhandle) { self.raw = raw }

    static func decompressor() -> TurboJPEGHandle? {
        tjInitDecompress().map(TurboJPEGHandle.init)
    }

    static func compressor() -> TurboJPEGHandle? {
        tjInitCompress().map(TurboJPEGHandle.init)
    }

    deinit { tjDestroy(raw) }

    /// The last error of this handle, one line, e.g. "Premature end of JPEG file".
    var errorMessage: String {
        guard let cString = tjGetErrorStr2(raw) else { return "unknown TurboJPEG error" }
        let message = String(cString: cString)
        let firstLine = message.split(whereSeparator: \.isNewline).first.map(String.init) ?? message
        return firstLine.isEmpty ? "unknown TurboJPEG error" : firstLine
    }

    /// A decode error for the last failure: `.unsupported` for valid JPEG variants that libjpeg-turbo
    /// 2.1 cannot decode (12-bit, lossless), `.corrupt` for everything else, warnings included.
    var decodeError: DecodeError {
        let message = errorMessage
        if message.hasPrefix("Unsupported JPEG data precision") || message.hasPrefix("Unsupported JPEG process") {
            return .unsupported(message)
        }
        return .corrupt(message)
    }

    /// The scaling factors of at most 1 whose denominator divides 8 (1/1, 7/8, 3/4, 5/8, 1/2, 3/8,
    /// 1/4, 1/8 in libjpeg-turbo 2.1), largest first.
    static let reducingFactors: [(num: Int, denom: Int)] = {
        var count: Int32 = 0
        guard let table = tjGetScalingFactors(&count), count > 0 else { return [(1, 1)] }
        var factors: [(num: Int, denom: Int)] = []
        for index in 0..<Int(count) {
            let factor = table[index]
            let num = Int(factor.num), denom = Int(factor.denom)
            guard num > 0, denom > 0, num <= denom, 8 % denom == 0 else { continue }
            factors.append((num, denom))
        }
        factors.sort { $0.num * $1.denom > $1.num * $0.denom }
        return factors.isEmpty ? [(1, 1)] : factors
    }()

    /// TurboJPEG's `TJSCALED` macro: ceil(dimension × num / denom).
    static func scaled(_ dimension: Int, _ factor: (num: Int, denom: Int)) -> Int {
        (dimension * factor.num + factor.denom - 1) / factor.denom
    }

    /// Decode CPU at each DCT scale M/8 relative to the full-size decode, and the resize after it
    /// (Lanczos3, AVX2 kernel) relative to the same, for a resize from the full size; the resize
    /// shrinks with the decoded pixels (M/8)². Measured in one run, medians of 15 interleaved
    /// decodes (`libfloor --scales`, scripts/bench-tools; `kiln bench-resample`) on this 2-core VM:
    ///
    /// | scale | 1920×1080 op2 photo | 4000×3000 op1 photo | used | + resize (0.35·(M/8)²) |
    /// | --- | --- | --- | --- | --- |
    /// | 8/8 | 11.8 ms (1.00) | 87.6 ms (1.00) | 1.00 | 1.35 |
    /// | 7/8 | 17.1 ms (1.45) | 103.4 ms (1.18) | 1.31 | 1.58 |
    /// | 6/8 | 14.2 ms (1.21) | 87.8 ms (1.00) | 1.10 | 1.30 |
    /// | 5/8 | 13.2 ms (1.12) | 81.1 ms (0.93) | 1.02 | 1.16 |
    /// | 4/8 | 10.1 ms (0.85) | 63.6 ms (0.73) | 0.79 | 0.88 |
    /// | 3/8 | 10.3 ms (0.88) | 64.7 ms (0.74) | 0.81 | 0.86 |
    /// | 2/8 | 9.3 ms (0.79) | 59.2 ms (0.68) | 0.73 | 0.75 |
    /// | 1/8 | 7.5 ms (0.64) | 46.9 ms (0.54) | 0.59 | 0.60 |
    ///
    /// The odd scales have no SIMD IDCT in libjpeg-turbo 2.1: 7/8 costs more than the full decode
    /// and the smaller resize after it, so a request that 7/8 would just cover decodes at full size
    /// (1920 → w:1200 asks for 1500 px: 17.1 + 3.6 ms at 7/8 against 11.8 + 4.7 ms at 8/8). The
    /// resize weight 0.35 is the AVX2 kernel's (full 1080p → 800×450: 4.7 ms against 11.8 ms of
    /// decode; 12 MP → 300 px: about 0.3); the float kernel's is about 0.8, which picks the same
    /// scales. Every other scale is cheaper in total than all larger ones.
    static let relativeCost: [Int: Double] = [8: 1.00, 7: 1.31, 6: 1.10, 5: 1.02, 4: 0.79, 3: 0.81, 2: 0.73, 1: 0.59]
    static let relativeResizeCost = 0.35

    /// The total relative cost (decode + resize from the decoded size) of decoding at `factor`.
    static func totalCost(_ factor: (num: Int, denom: Int)) -> Double {
        let eighths = factor.num * 8 / factor.denom
        let fraction = Double(factor.num) / Double(factor.denom)
        return (relativeCost[eighths] ?? 1) + relativeResizeCost * fraction * fraction
    }

    /// The cheapest factor (`totalCost`) whose scaled size still covers `minimum` on both axes;
    /// only sizes at least `minimum` are candidates, so the fidelity floor is the caller's.
    static func factor(for size: PixelSize, minimum: PixelSize?) -> (num: Int, denom: Int) {
        guard let minimum else { return (1, 1) }
        var best: (num: Int, denom: Int) = (1, 1)
        for factor in reducingFactors {
            guard scaled(size.width, factor) >= minimum.width, scaled(size.height, factor) >= minimum.height else { break }
            if totalCost(factor) < totalCost(best) { best = factor }
        }
        return best
    }
}
