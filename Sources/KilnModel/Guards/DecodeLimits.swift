/// The decode guard: limits checked against the header before a single pixel is allocated, so
/// decompression bombs are refused by their announced size (with `ImageDecoding.readHeader`).
public struct DecodeLimits: Sendable, Equatable {
    /// Largest stored image, in pixels (`limits.max_pixels`, default 50 MP, as imgproxy).
    public var maxPixels: Int
    /// Largest canvas × frames of an animation (`limits.max_animation_pixels`, default 50 MP).
    public var maxAnimationPixels: Int

    public init(maxPixels: Int = 50_000_000, maxAnimationPixels: Int = 50_000_000) {
        self.maxPixels = maxPixels
        self.maxAnimationPixels = maxAnimationPixels
    }

    /// Throws `DecodeError.overLimit` when the header asks for too much.
    public func check(_ header: ImageHeader) throws(DecodeError) {
        guard header.width > 0, header.height > 0 else {
            throw .corrupt("image has no pixels (\(header.width)x\(header.height))")
        }
        if header.width.multipliedReportingOverflow(by: header.height).partialValue > maxPixels
            || header.width > maxPixels || header.height > maxPixels {
            throw .overLimit("\(header.width)x\(header.height) is over the limit of \(maxPixels) pixels")
        }
        if header.frameCount > 1 && header.width * header.height * header.frameCount > maxAnimationPixels {
            throw .overLimit("animation of \(header.frameCount) frames of \(header.width)x\(header.height) is over the limit of \(maxAnimationPixels) pixels")
        }
    }
}
