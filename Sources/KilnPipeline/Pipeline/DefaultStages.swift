import KilnCodecs
import KilnModel
import KilnProcessing

/// The codecs of `KilnCodecs` as the decode and encode stages (`Codecs` lookups; the codecs are
/// stateless values).
public struct CodecRegistry: ImageDecoderProviding, ImageEncoderProviding, AnimationCodecProviding, Sendable {
    public init() {}
    public func animationDecoder(for format: ImageFormat) -> (any AnimationDecoding)? { Codecs.animationDecoder(for: format) }
    public func animationEncoder(for format: ImageFormat) -> (any AnimationEncoding)? { Codecs.animationEncoder(for: format) }
    public func decoder(for format: ImageFormat) -> any ImageDecoding { Codecs.decoder(for: format) }
    public func encoder(for format: ImageFormat) -> any ImageEncoding { Codecs.encoder(for: format) }
    public func canEncode(_ format: ImageFormat) -> Bool { Codecs.canEncode(format) }
}

extension ProcessorFactory: ProcessorProviding {}

/// EXIF orientation with `KilnProcessing.Orientation`.
public struct ExifOrienter: Orienting, Sendable {
    public init() {}
    public func orient(_ image: PixelBuffer, exifOrientation: Int) -> PixelBuffer {
        Orientation(exifValue: exifOrientation).apply(to: image)
    }
}

/// Flattening with `KilnProcessing.Flatten`.
public struct Flattener: Flattening, Sendable {
    public init() {}
    public func flatten(_ image: PixelBuffer, onto background: RGBColor) -> PixelBuffer {
        Flatten(background).apply(to: image)
    }
}
