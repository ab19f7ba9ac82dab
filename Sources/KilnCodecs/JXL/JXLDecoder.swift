import KilnModel

/// Decodes JXL (to be written).
public struct JXLDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        throw .unsupported("JXL is not decoded yet")
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        throw .unsupported("JXL is not decoded yet")
    }
}
