import KilnModel

/// Decodes BMP (to be written).
public struct BMPDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        throw .unsupported("BMP is not decoded yet")
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        throw .unsupported("BMP is not decoded yet")
    }
}
