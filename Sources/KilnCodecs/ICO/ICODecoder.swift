import KilnModel

/// Decodes ICO (to be written).
public struct ICODecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        throw .unsupported("ICO is not decoded yet")
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        throw .unsupported("ICO is not decoded yet")
    }
}
