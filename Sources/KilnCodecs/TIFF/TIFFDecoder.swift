import CTiff
import KilnModel

/// Decodes TIFF with libtiff 4.5 (loaded on first use: CTiff), any layout libtiff's RGBA
/// interface reads (strips or tiles, contiguous or planar, 1-16 bits, grey, palette, RGB, CMYK,
/// YCbCr, and its codecs: LZW, Deflate, PackBits, JPEG, ...).
///
/// - Pages: `TIFFDirectoryChain` counts the directories in Swift first (at most `maxPages`, or the
///   file is `.corrupt`); `page:<n>` selects directory n (`TIFFSetDirectory`), the default is the first.
/// - Header: width, length, samples, extra samples (alpha), Orientation (274) and whether an ICC
///   profile (34675) is present, read with `TIFFGetField` without decoding a strip.
/// - Guard: the limits are checked against the page's header, then its strip or tile geometry:
///   tiles wider or taller than `maxTileSide`, or a strip or tile that would need more bytes than
///   libtiff may allocate (`TIFFOpenOptionsSetMaxSingleMemAlloc`, 8 bytes a pixel of the pixel
///   limit, at least 64 MiB), are refused before libtiff reads any image data.
/// - Orientation: reported in the header, pixels returned as stored (the pipeline rotates).
/// - Output: RGB, or RGBA unpremultiplied when there is alpha (libtiff's RGBA reader
///   premultiplies unassociated alpha, so both kinds are divided back; precision is lost at low alpha).
///   The ICC profile, if any, is returned with the image.
public struct TIFFDecoder: ImageDecoding, PagedDecoding, Sendable {
    /// Directories accepted in a file.
    public static let maxPages = 1024
    /// Largest tile side accepted.
    public static let maxTileSide = 65_536
    /// libtiff's single-allocation bound while reading headers.
    static let headerAllocation = 64 << 20

    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        try readHeader(data, page: 0)
    }

    public func readHeader(_ data: [UInt8], page: Int) throws(DecodeError) -> ImageHeader {
        let pages = try Self.pageCount(data, page: page)
        return try TIFFHandle.with(data, maxAllocation: Self.headerAllocation) { handle throws(DecodeError) in
            Self.header(try handle.info(page: page), pageCount: pages)
        }
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let page = options.page ?? 0
        let pages = try Self.pageCount(data, page: page)
        let allocation = max(64 << 20, min(options.limits.maxPixels, 1 << 40) * 8)
        return try TIFFHandle.with(data, maxAllocation: allocation) { handle throws(DecodeError) in
            let info = try handle.info(page: page)
            let header = Self.header(info, pageCount: pages)
            try options.limits.check(header)
            try Self.checkGeometry(info, maxAllocation: allocation)
            let read = try handle.readRGBA(width: header.width, height: header.height)
            let buffer = Self.buffer(read.raster, header: header, premultiplied: read.premultiplied)
            return DecodedImage(buffer: buffer, header: header, iccProfile: handle.iccProfile(size: Int(info.icc_size)))
        }
    }

    static func pageCount(_ data: [UInt8], page: Int) throws(DecodeError) -> Int {
        let pages = try TIFFDirectoryChain.walk(data, limit: maxPages).offsets.count
        guard page >= 0, page < pages else { throw .corrupt("TIFF has no page \(page) (it has \(pages))") }
        return pages
    }

    static func header(_ info: kiln_tiff_info, pageCount: Int) -> ImageHeader {
        let orientation = (1...8).contains(Int(info.orientation)) ? Int(info.orientation) : 1
        var header = ImageHeader(format: .tiff, width: Int(info.width), height: Int(info.height), frameCount: 1,
                                 orientation: orientation, hasAlpha: info.has_alpha != 0)
        header.pageCount = pageCount
        header.hasColourProfile = info.icc_size > 0
        return header
    }

    /// Refuses strips and tiles libtiff would refuse only after reading the directory's data.
    static func checkGeometry(_ info: kiln_tiff_info, maxAllocation: Int) throws(DecodeError) {
        let bitsPerPixel = Int(info.samples_per_pixel) * Int(info.bits_per_sample)
        let width: Int, rows: Int
        if info.tiled != 0 {
            width = Int(info.tile_width)
            rows = Int(info.tile_height)
            guard (1...maxTileSide).contains(width), (1...maxTileSide).contains(rows) else {
                throw .corrupt("TIFF tiles of \(width)x\(rows) are out of range")
            }
        } else {
            width = Int(info.width)
            rows = info.rows_per_strip == 0 ? Int(info.height) : min(Int(info.rows_per_strip), Int(info.height))
        }
        let bits = width.multipliedReportingOverflow(by: bitsPerPixel)
        let bytes = ((bits.partialValue + 7) / 8).multipliedReportingOverflow(by: rows)
        guard !bits.overflow, !bytes.overflow else { throw .corrupt("TIFF strip size overflows") }
        guard bytes.partialValue <= maxAllocation else {
            throw .overLimit("TIFF strip or tile of \(bytes.partialValue) bytes is over the limit of \(maxAllocation)")
        }
    }

    /// ABGR words (R in the low byte) as RGB, or as unpremultiplied RGBA.
    static func buffer(_ raster: [UInt32], header: ImageHeader, premultiplied: Bool) -> PixelBuffer {
        let channels = header.hasAlpha ? 4 : 3
        var pixels = [UInt8](repeating: 0, count: raster.count * channels)
        var o = 0
        for word in raster {
            var r = UInt8(truncatingIfNeeded: word), g = UInt8(truncatingIfNeeded: word >> 8), b = UInt8(truncatingIfNeeded: word >> 16)
            if channels == 4 {
                let a = UInt8(truncatingIfNeeded: word >> 24)
                if premultiplied && a != 255 {
                    r = unpremultiply(r, a)
                    g = unpremultiply(g, a)
                    b = unpremultiply(b, a)
                }
                pixels[o + 3] = a
            }
            pixels[o] = r
            pixels[o + 1] = g
            pixels[o + 2] = b
            o += channels
        }
        return PixelBuffer(width: header.width, height: header.height, channels: channels, pixels: pixels)
    }

    static func unpremultiply(_ value: UInt8, _ alpha: UInt8) -> UInt8 {
        guard alpha != 0 else { return 0 }
        return UInt8(min(255, (Int(value) * 255 + Int(alpha) / 2) / Int(alpha)))
    }
}
