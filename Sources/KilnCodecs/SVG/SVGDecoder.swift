import CRsvg
import KilnModel

/// Rasterises SVG: the document is sanitised first (`SVGSanitizer`: no external reference, no
/// script, no entity, bounded nesting, elements, `<use>` expansion and filters), then librsvg
/// draws the sanitised bytes at the size the pipeline asks for (`DecodeOptions.rasterSize`,
/// from `VectorRaster`; the intrinsic size without it) into a cairo surface, which is
/// un-premultiplied into RGBA.
///
/// - Header: the intrinsic size in CSS pixels, rounded (`SVGIntrinsicSize`), with alpha, and
///   `ImageHeader.vector` for the cost planner. Reading it never loads librsvg.
/// - A document librsvg refuses is `DecodeError.corrupt` with librsvg's reason; a raster side
///   over 32767 (cairo's limit) is `DecodeError.overLimit`; without librsvg installed every SVG
///   is `DecodeError.unsupported`.
public struct SVGDecoder: ImageDecoding, Sendable {
    public init() {}

    /// Whether librsvg (and cairo) can be loaded here.
    public static var isAvailable: Bool { kiln_rsvg_available() != 0 }

    /// librsvg's version, nil when it is not installed.
    public static var libraryVersion: String? {
        isAvailable ? String(cString: kiln_rsvg_version()) : nil
    }

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        Self.header(of: try SVGSanitizer.sanitize(data))
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let sanitized = try SVGSanitizer.sanitize(data)
        let intrinsic = Self.header(of: sanitized)
        var raster = intrinsic
        if let size = options.rasterSize {
            raster.width = size.width
            raster.height = size.height
        }
        try options.limits.check(raster)
        guard raster.width <= 32_767, raster.height <= 32_767 else {
            throw .overLimit("SVG raster of \(raster.width)x\(raster.height) is over 32767 pixels on a side")
        }
        guard Self.isAvailable else { throw .unsupported("SVG needs librsvg (librsvg2-2), which is not installed") }
        var pixels = [UInt8](repeating: 0, count: raster.width * raster.height * 4)
        var error = [CChar](repeating: 0, count: 256)
        let status = sanitized.document.withUnsafeBufferPointer { document in
            pixels.withUnsafeMutableBufferPointer { out in
                error.withUnsafeMutableBufferPointer { message in
                    kiln_rsvg_render(document.baseAddress!, document.count, sanitized.facts.intrinsicWidth,
                                     sanitized.facts.intrinsicHeight, Int32(raster.width), Int32(raster.height),
                                     out.baseAddress!, message.baseAddress!, message.count)
                }
            }
        }
        guard status == 0 else {
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .corrupt("SVG: \(reason)")
        }
        Self.unpremultiplyBGRA(&pixels)
        let buffer = PixelBuffer(width: raster.width, height: raster.height, channels: 4, pixels: pixels)
        return DecodedImage(buffer: buffer, header: raster)
    }

    static func header(of sanitized: SVGSanitizer.Result) -> ImageHeader {
        let facts = sanitized.facts
        var header = ImageHeader(format: .svg, width: VectorRaster.clamp(facts.intrinsicWidth),
                                 height: VectorRaster.clamp(facts.intrinsicHeight), hasAlpha: true)
        header.hasColourProfile = false
        header.vector = facts
        return header
    }

    /// cairo's premultiplied B, G, R, A (little-endian ARGB32) to straight R, G, B, A, in place.
    static func unpremultiplyBGRA(_ pixels: inout [UInt8]) {
        var i = 0
        while i + 3 < pixels.count {
            let b = Int(pixels[i]), g = Int(pixels[i + 1]), r = Int(pixels[i + 2]), a = Int(pixels[i + 3])
            if a == 255 || a == 0 {
                pixels[i] = UInt8(r)
                pixels[i + 2] = UInt8(b)
            } else {
                pixels[i] = UInt8(min(255, (r * 255 + a / 2) / a))
                pixels[i + 1] = UInt8(min(255, (g * 255 + a / 2) / a))
                pixels[i + 2] = UInt8(min(255, (b * 255 + a / 2) / a))
            }
            i += 4
        }
    }
}
