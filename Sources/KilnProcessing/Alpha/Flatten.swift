import KilnModel

/// Composites RGBA onto an opaque background colour and returns RGB (3 channels).
///
/// Used before encoding to a format without alpha (JPEG). Handles straight and premultiplied
/// input; RGB input is returned unchanged.
public struct Flatten: ImageProcessing, Sendable, Hashable {
    public var background: RGBColor

    public init(_ background: RGBColor) {
        self.background = background
    }

    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.init(RGBColor(red: red, green: green, blue: blue))
    }

    /// White, the usual background for JPEG output.
    public static let white = Flatten(.white)
    public static let black = Flatten(.black)

    /// `bg:rrggbb`, lower-case hex.
    public var identifier: String { "bg:\(background)" }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        apply(to: image)
    }

    /// The flattened image: `c * a + background * (255 - a)`, divided by 255 and rounded, per
    /// channel (for premultiplied input `c + background * (255 - a) / 255`).
    public func apply(to image: PixelBuffer) -> PixelBuffer {
        guard image.hasAlpha else { return image }
        let count = image.pixelCount
        let premultiplied = image.isPremultiplied
        let background = (UInt32(self.background.red), UInt32(self.background.green), UInt32(self.background.blue))
        let out = [UInt8](unsafeUninitializedCapacity: count * 3) { dstBuffer, initialised in
            image.pixels.withUnsafeBufferPointer { srcBuffer in
                guard count > 0 else { return }
                let src = srcBuffer.baseAddress!
                let dst = dstBuffer.baseAddress!
                if premultiplied {
                    // c + background * (255 - a) / 255
                    for i in 0..<count {
                        let s = src + i * 4, d = dst + i * 3
                        let inverse = 255 - UInt32(s[3])
                        d[0] = UInt8(min(255, UInt32(s[0]) + UInt32(Alpha.mulDiv255(background.0, inverse))))
                        d[1] = UInt8(min(255, UInt32(s[1]) + UInt32(Alpha.mulDiv255(background.1, inverse))))
                        d[2] = UInt8(min(255, UInt32(s[2]) + UInt32(Alpha.mulDiv255(background.2, inverse))))
                    }
                } else {
                    for i in 0..<count {
                        let s = src + i * 4, d = dst + i * 3
                        let a = UInt32(s[3]), inverse = 255 - a
                        d[0] = Self.blend(UInt32(s[0]), background.0, a, inverse)
                        d[1] = Self.blend(UInt32(s[1]), background.1, a, inverse)
                        d[2] = Self.blend(UInt32(s[2]), background.2, a, inverse)
                    }
                }
            }
            initialised = count * 3
        }
        return PixelBuffer(width: image.width, height: image.height, channels: 3, pixels: out)
    }

    /// `round((c * a + bg * inverse) / 255)`; the sum is at most 255 * 255, so exact division.
    @inline(__always)
    static func blend(_ c: UInt32, _ bg: UInt32, _ a: UInt32, _ inverse: UInt32) -> UInt8 {
        let t = c * a + bg * inverse + 128
        return UInt8((t + (t >> 8)) >> 8)
    }
}
