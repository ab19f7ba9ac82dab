import CKilnCodecShims
import KilnModel

/// Decodes PNG with libpng's simplified API (`png_image_*`, which handles libpng's setjmp itself).
///
/// - The header comes from `png_image_begin_read_from_memory`, which reads the chunks before the
///   image data only; the limits are checked before `png_image_finish_read` allocates anything.
/// - Output is 8-bit RGBA when the file has alpha or tRNS, else RGB; palette, grey, 1-16-bit and
///   Adam7 files all come out that way. The simplified API converts to sRGB: a gAMA chunk is
///   honoured (PngSuite's gamma-1.0 files come out brighter, as in browsers that honour gAMA),
///   and 16-bit files without gAMA are taken as sRGB-encoded (`PNG_IMAGE_FLAG_16BIT_sRGB`) rather
///   than as linear light, so a 16-bit file decodes like its 8-bit reduction.
/// - CRC errors in critical chunks and truncated data are `DecodeError.corrupt` with libpng's message;
///   chunks claiming more bytes than the file holds are refused before libpng allocates for them
///   (`PNGChunks`).
/// - The common files (8-bit RGB/RGBA, non-interlaced, sRGB-encoded) skip libpng's pixel read:
///   `PNGFastDecode` inflates with libdeflate and unfilters in Swift, byte for byte what libpng
///   gives; whatever it does not accept (including every error) goes through libpng as before.
/// - Shrink-on-load for large sources (`PNGShrinkOnLoad`): when `DecodeOptions.minimumSize` is
///   set and the decoded source would take 64 MiB or more, eligible files are read row by row
///   and box-averaged while reading, so the whole source is never held.
/// - APNG: the default image. The ICC profile comes from iCCP through the low-level API (C shim),
///   read only when a scan of the chunk headers finds an iCCP chunk; EXIF (eXIf) and XMP (iTXt)
///   are copied from the chunks that scan finds (`PNGMetadata`). The eXIf orientation is reported
///   in the header like JPEG's and WebP's, so the pipeline applies it (as libvips and browsers do).
public struct PNGDecoder: ImageDecoding, Sendable {
    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> ImageHeader in
                let chunks = try PNGChunks.scan(bytes)
                var header = try chunks.withLibpngBytes(bytes) { (shown: UnsafeRawBufferPointer) throws(DecodeError) -> ImageHeader in
                    Self.header(of: try PNGImageReader(shown), orientation: chunks.orientation(in: bytes))
                }
                header.hasColourProfile = chunks.hasICCProfile
                return header
            }
        }.get()
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        try data.withUnsafeBytes { bytes in
            Result { () throws(DecodeError) -> DecodedImage in try Self.decode(bytes, options: options) }
        }.get()
    }

    // MARK: - Implementation

    /// What one pass of libpng over the bytes gives.
    private struct LibpngRead {
        var header: ImageHeader
        var buffer: PixelBuffer
        var icc: [UInt8]?
    }

    private static func header(of reader: PNGImageReader, orientation: Int) -> ImageHeader {
        ImageHeader(format: .png, width: reader.width, height: reader.height, frameCount: 1,
                    orientation: orientation, hasAlpha: reader.hasAlpha)
    }

    /// The decode; `fastPath: false` reads every file through libpng (the tests compare the two).
    package static func decode(_ bytes: UnsafeRawBufferPointer, options: DecodeOptions,
                       fastPath: Bool = true) throws(DecodeError) -> DecodedImage {
        let chunks = try PNGChunks.scan(bytes)
        let read = try chunks.withLibpngBytes(bytes) { (shown: UnsafeRawBufferPointer) throws(DecodeError) -> LibpngRead in
            let reader = try PNGImageReader(shown)
            let header = Self.header(of: reader, orientation: chunks.orientation(in: bytes))
            try options.limits.check(header)
            let channels = header.hasAlpha ? 4 : 3
            let icc = chunks.hasICCProfile ? Self.readICC(shown) : nil
            if chunks.rowReadable,
               let k = PNGShrinkOnLoad.factors(size: header.size, channels: channels, minimum: options.minimumSize),
               let shrunk = try PNGShrinkOnLoad.decode(shown, k: k) {
                return LibpngRead(header: header, buffer: shrunk, icc: icc)
            }
            if fastPath, let fast = PNGFastDecode.decode(bytes, chunks: chunks),
               fast.width == header.width, fast.height == header.height, fast.channels == channels {
                return LibpngRead(header: header, buffer: fast, icc: icc)
            }
            let pixels = try reader.finishRead(channels: channels)
            let buffer = PixelBuffer(width: header.width, height: header.height, channels: channels, pixels: pixels)
            return LibpngRead(header: header, buffer: buffer, icc: icc)
        }
        let (header, buffer, icc) = (read.header, read.buffer, read.icc)
        return DecodedImage(buffer: buffer, header: header, iccProfile: icc,
                            metadata: PNGMetadata.read(bytes, chunks: chunks))
    }

    /// The iCCP profile, nil when libpng finds it invalid (a broken profile never fails the decode).
    package static func readICC(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard let base = bytes.baseAddress else { return nil }
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var message = [CChar](repeating: 0, count: 128)
        let found = kiln_png_read_icc(base.assumingMemoryBound(to: UInt8.self), bytes.count,
                                      &output, &size, &message, message.count)
        defer { if let output { kiln_png_free(output) } }
        guard found == 1, let output, size > 0 else { return nil }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
