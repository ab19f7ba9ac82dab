import KilnModel

/// Decodes SVG (to be written).
public struct SVGDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        throw .unsupported("SVG is not decoded yet")
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        throw .unsupported("SVG is not decoded yet")
    }
}
