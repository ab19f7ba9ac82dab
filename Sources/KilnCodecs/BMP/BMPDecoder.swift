import KilnModel

/// Decodes Windows and OS/2 bitmaps (BMP) in Swift, without a library.
///
/// - The file header (`BM`, 14 bytes) gives the pixel data's offset; the bitmap itself
///   (`DIBImage`) is a BITMAPINFOHEADER, V4 or V5 header, or an OS/2 core header, of 1, 4, 8, 16,
///   24 or 32 bits a pixel, bottom-up or top-down, or run-length encoded (RLE8, RLE4). A bitmap
///   holding a JPEG or PNG (BI_JPEG, BI_PNG) is `.unsupported`.
/// - The header is read without touching the pixels; the limits are checked before the buffer is
///   allocated, and the pixel rows' length is checked against the file ("BMP is truncated").
/// - Output: RGB, or RGBA when the bitmap has an alpha mask (an all-zero alpha is opaque).
///   A V5 header's colour space or embedded profile is ignored (the pixels are taken as sRGB).
public struct BMPDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        Self.header(try Self.bitmap(data))
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let bitmap = try Self.bitmap(data)
        let header = Self.header(bitmap)
        try options.limits.check(header)
        return DecodedImage(buffer: try bitmap.decode(data), header: header)
    }

    static func bitmap(_ data: [UInt8]) throws(DecodeError) -> DIBImage {
        guard data.count >= 18 else { throw .corrupt("BMP is truncated") }
        guard data[0] == 0x42, data[1] == 0x4D else { throw .corrupt("not a BMP (no BM signature)") }
        let offset = try ByteReader(data: data, format: "BMP").u32(10)
        return try DIBImage.parse(data, at: 14, pixelOffset: offset, icon: false, format: "BMP")
    }

    static func header(_ bitmap: DIBImage) -> ImageHeader {
        var header = ImageHeader(format: .bmp, width: bitmap.width, height: bitmap.height, hasAlpha: bitmap.hasAlpha)
        header.hasColourProfile = false
        return header
    }
}
