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

    /// The smallest reducing factor whose scaled size still covers `minimum` on both axes.
    static func factor(for size: PixelSize, minimum: PixelSize?) -> (num: Int, denom: Int) {
        guard let minimum else { return (1, 1) }
        var best: (num: Int, denom: Int) = (1, 1)
        for factor in reducingFactors {
            guard scaled(size.width, factor) >= minimum.width, scaled(size.height, factor) >= minimum.height else { break }
            best = factor
        }
        return best
    }
}
