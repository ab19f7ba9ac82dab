import KilnModel

/// `sharpen:<sigma>` (`sh`): an unsharp mask, `out = image + amount × (image − blur(image, sigma))`
/// with `amount` fixed at 1 (the detail finer than `sigma` is doubled), clamped to 0...255.
///
/// RGBA is sharpened premultiplied and only in its colour channels: the alpha channel is kept as
/// it was (sharpening it would change the shape), and colour is clamped to `0...alpha` so that
/// no pixel becomes brighter than its opacity allows.
public struct Sharpen: ImageProcessing, Sendable, Hashable {
    public var sigma: Double
    /// How much of the detail is added back; 1 doubles it.
    public static let amount: Float = 1

    public init(sigma: Double) {
        self.sigma = sigma
    }

    public var identifier: String { Operation.sharpen(sigma: sigma).identifier }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        guard sigma.isFinite, sigma > 0 else {
            throw .invalidArgument(option: "sharpen", reason: "sigma must be above 0")
        }
        // Below the minimum no pixel changes (the URL parser drops such steps); returning the
        // image keeps a tiny sigma from reaching the kernel, where its square could underflow.
        guard image.pixelCount > 0, sigma >= SpecParser.minimumSigma else { return image }
        let amount = Self.amount
        let alpha = image.hasAlpha
        // In vertical strips (`FloatStrips`): the float copies stay a few MB. The strip is blurred
        // in place and then replaced by the sharpened values, from its unblurred copy.
        return FloatStrips.map(image, halo: GaussianBlur.halo(sigma: sigma), keepOriginal: true) { strip, original in
            guard let original else { return }
            GaussianBlur.blur(&strip, sigma: sigma)
            let count = strip.samples.count
            strip.samples.withUnsafeMutableBufferPointer { b in
                original.samples.withUnsafeBufferPointer { s in
                    if alpha {
                        var i = 0
                        while i < count {
                            let a = s[i + 3]
                            for c in i..<(i + 3) {
                                b[c] = Swift.min(Swift.max(s[c] + amount * (s[c] - b[c]), 0), a)
                            }
                            b[i + 3] = a
                            i += 4
                        }
                    } else {
                        for i in 0..<count {
                            b[i] = Swift.min(Swift.max(s[i] + amount * (s[i] - b[i]), 0), 255)
                        }
                    }
                }
            }
        }
    }
}
