import CKilnCodecShims
import KilnModel

/// Encodes 8-bit RGB or RGBA PNG through a C shim (`kiln_png_encode`), writing into one growing
/// memory buffer. libpng writes the container (signature, IHDR, iCCP, eXIf, iTXt); for
/// non-interlaced output the shim filters the rows itself and compresses them in one call to
/// libdeflate (a single IDAT), for Adam7 libpng filters and zlib compresses as before.
///
/// The default, every filter chosen per row by the least sum of absolute differences (`.all`,
/// libpng's and Pillow's heuristic) at libdeflate level `options.pngCompressionLevel` (default 6),
/// was chosen on the op3 output of `scripts/bench` (400×225 RGBA from the 1920×1080 cut-out;
/// Pillow writes 119003 bytes for it, the target is at most 3 % more, 122573). Encode time alone,
/// best of 5, C shim compiled -O2, shared 2-core machine (issue 15):
///
/// | filter, libdeflate level | bytes  | ms   |
/// |--------------------------|--------|------|
/// | up, 1                    | 130318 |  2.7 |
/// | up, 6                    | 126909 |  8.2 |
/// | paeth, 6                 | 123492 |  9.5 |
/// | all, 1                   | 125417 |  5.5 |
/// | all, 3                   | 118094 |  8.5 |
/// | all, 5                   | 122371 |  9.7 |
/// | all, 6 (default)         | 121594 | 12.5 |
/// | all, 9                   | 120058 | 32.5 |
/// | all, 12                  | 114235 | 99.4 |
/// | before: libpng + zlib, up, 6 | 123605 | 30 |
///
/// Level 3's small file is luck of this image (on an 800×450 crop of the same source level 3 gives
/// 436755 bytes, level 6 422402, level 9 413798), so the level keeps its meaning: the configured
/// level 0...9 is passed to libdeflate unchanged, and `.all` costs 3-4 ms more than UP but is what
/// brings the file under Pillow's + 3 %. On an RGB photo (400×225) `.all` at 6 gives 170327 bytes
/// against 174796 for UP.
/// `options.progressive` selects Adam7 interlacing; `options.iccProfile` becomes an iCCP chunk when
/// it is an RGB profile (libpng itself drops profiles that do not fit the image); `options.metadata`
/// becomes an eXIf chunk and an uncompressed iTXt "XML:com.adobe.xmp" chunk (`PNGMetadata`).
public struct PNGEncoder: ImageEncoding, Sendable {
    /// Row filters libpng may choose from.
    public enum Filter: Sendable, Equatable {
        case none, sub, up, average, paeth
        /// Per row, the filter with the least sum of absolute differences (libpng's heuristic).
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

    public init(filter: Filter = .all) {
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
                                        image.rowBytes, level, options.progressive ? 1 : 0, filter.bits, level,
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
