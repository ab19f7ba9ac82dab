import KilnModel

/// Decodes TIFF (to be written).
public struct TIFFDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        throw .unsupported("TIFF is not decoded yet")
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        throw .unsupported("TIFF is not decoded yet")
    }
}
