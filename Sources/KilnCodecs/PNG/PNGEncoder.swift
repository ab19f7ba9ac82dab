import CKilnShims
import KilnCore

/// Encodes 8-bit RGB or RGBA PNG through a C shim over libpng's low-level write API
/// (`kiln_png_encode`), writing into one growing memory buffer.
///
/// libpng's simplified writer took 244-300 ms for 800×600 RGBA (NOTES.md): it lets libpng try
/// every filter on every row, and asked for the size first it compresses twice. Here one pass
/// uses one row filter, `filter`, at `options.pngCompressionLevel`. The default, UP, was the best
/// speed/size trade-off measured on 800×600 crops of the bench images (release build, thread CPU
/// time, loaded 2-core machine): at zlib level 6, RGB photo UP 122 ms / 884 KB, SUB 116 ms / 926 KB,
/// PAETH 120 ms / 916 KB, all filters 167 ms / 905 KB, NONE 56 ms / 1130 KB; RGBA cut-out UP
/// 142-167 ms / 551 KB, SUB 178 ms / 630 KB, PAETH 174-208 ms / 536 KB, all 195 ms / 536 KB. At level 1
/// UP took 25 ms for 877 KB and 685 KB.
/// `options.progressive` selects Adam7 interlacing; `options.iccProfile` becomes an iCCP chunk when
/// it is an RGB profile (libpng itself drops profiles that do not fit the image); `options.metadata`
/// becomes an eXIf chunk and an uncompressed iTXt "XML:com.adobe.xmp" chunk (`PNGMetadata`).
public struct PNGEncoder: ImageEncoding, Sendable {
    /// Row filters libpng may choose from.
    public enum Filter: Sendable, Equatable {
        case none, sub, up, average, paeth
        /// libpng's per-row heuristic over all five filters (smallest files, slowest).
        case all

        var bits: Int32 {
            switch self {
            case .none: Int32(KILN_PNG_FILTER_NONE)
            case .sub: Int32(KILN_PNG_FILTER_SUB)
            case .up: Int32(KILN_PNG_FILTER_UP)
            case .average: Int32(KILN_PNG_FILTER_AVG)
            case .paeth: Int32(KILN_PNG_FILTER_PAETH)
            case .all: Int32(KILN_PNG_FILTER_ALL)
            }
        }
    }

    public var filter: Filter

    public init(filter: Filter = .up) {
        self.filter = filter
    }

    public func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        guard image.channels == 3 || image.channels == 4, image.width > 0, image.height > 0,
              image.pixels.count == image.width * image.height * image.channels else {
            throw .failed("PNG encoder needs a non-empty RGB or RGBA buffer")
        }
        var profile = options.iccProfile.flatMap { ICCProfile.isRGB($0) ? $0 : nil } ?? []
        let exif = options.metadata?.exif ?? [], xmp = options.metadata?.xmp ?? []
        var output: UnsafeMutablePointer<UInt8>? = nil
        var size = 0
        var message = [CChar](repeating: 0, count: 256)
        let level = Int32(min(max(options.pngCompressionLevel, 0), 9))
        let rc = image.pixels.withUnsafeBufferPointer { pixels in
            profile.withUnsafeMutableBufferPointer { icc in
                exif.withUnsafeBufferPointer { exif in
                    xmp.withUnsafeBufferPointer { xmp in
                        kiln_png_encode(pixels.baseAddress, UInt32(image.width), UInt32(image.height), Int32(image.channels),
                                        image.rowBytes, level, options.progressive ? 1 : 0, filter.bits,
                                        icc.baseAddress, icc.count, exif.baseAddress, exif.count, xmp.baseAddress, xmp.count,
                                        &output, &size, &message, message.count)
                    }
                }
            }
        }
        defer { if let output { kiln_png_free(output) } }
        guard rc == 0, let output, size > 0 else {
            let text = String(decoding: message.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .failed("PNG encode failed: \(text.isEmpty ? "libpng error" : text)")
        }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }
}
