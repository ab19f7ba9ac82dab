import KilnModel

/// `posterize:<levels>` (2...32): an example custom processor. Each colour channel is reduced to
/// `levels` evenly spaced values, `round(round(v (n−1) / 255) × 255 / (n−1))`; alpha is kept.
/// A build adds it with `registry.register("posterize", make: Posterize.make)`.
public struct Posterize: ImageProcessing, Sendable, Hashable {
    public let levels: Int

    public init(levels: Int) {
        self.levels = levels
    }

    public var identifier: String { "posterize:\(levels)" }

    /// The registry's constructor: one argument, a whole number in 2...32.
    @Sendable public static func make(_ arguments: [String]) throws(ProcessingError) -> any ImageProcessing {
        guard arguments.count == 1, let n = Int(arguments[0]), (2...32).contains(n) else {
            throw .invalidArgument(option: "posterize", reason: "levels must be a whole number in 2...32")
        }
        return Posterize(levels: n)
    }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        let n = Double(levels - 1)
        let table = (0..<256).map { v in UInt8((((Double(v) * n / 255).rounded()) * 255 / n).rounded()) }
        var out = Alpha.unpremultiplied(image)
        let step = out.channels
        out.pixels.withUnsafeMutableBufferPointer { p in
            for i in stride(from: 0, to: p.count, by: step) {
                p[i] = table[Int(p[i])]; p[i + 1] = table[Int(p[i + 1])]; p[i + 2] = table[Int(p[i + 2])]
            }
        }
        return out
    }
}
