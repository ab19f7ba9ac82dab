import KilnModel

/// What decoding a source will hold in memory, known from its bytes and header before anything
/// is decoded (issue 14, the memory budget): the decoded buffer's size after shrink-on-load and
/// the decoder's own working set beside it.
///
/// Calibrated against peak RSS (`/usr/bin/time -v kiln process`, release build): a 12 MP JPEG
/// decodes into 36 MB RGB plus a few MB of libjpeg-turbo state; WebP lossless (VP8L) decodes
/// into a full-size ARGB array of its own (4 B/px) before converting; a WebP with alpha keeps
/// a full alpha plane (1 B/px); `WebPAnimDecoder` keeps two RGBA canvases.
public struct DecodePlan: Sendable, Equatable {
    /// The decoded buffer (stored orientation).
    public var size: PixelSize
    public var channels: Int
    /// Bytes the decoder holds beside the decoded buffer while it works.
    public var scratchBytes: Int
    /// True when the decoder reads rows and shrinks while reading (`PNGShrinkOnLoad`).
    public var streamed: Bool
    /// Pixels the codec decodes: the header's size, or for HEIC and AVIF every coded item (a
    /// grid's tiles, the alpha plane; `CodedLayout`), which the decode work is priced by.
    public var codedPixels: Int = 0

    public var bufferBytes: Int { size.width * size.height * channels }

    /// The plan for decoding `data` (of `format`, with `header`) for a leading resize needing
    /// at least `minimum` pixels (`DecodeOptions.minimumSize`).
    public static func plan(format: ImageFormat, data: [UInt8], header: ImageHeader, minimum: PixelSize?) -> DecodePlan {
        let full = header.size
        switch format {
        case .jpeg:
            let f = TurboJPEGHandle.factor(for: full, minimum: minimum)
            let size = PixelSize(width: TurboJPEGHandle.scaled(full.width, f), height: TurboJPEGHandle.scaled(full.height, f))
            // CMYK is decoded to 4 bytes per pixel, then converted into the RGB buffer.
            let perPixel = Self.jpegComponents(data) == 4 ? 4 : 1
            return DecodePlan(size: size, channels: 3, scratchBytes: perPixel * size.width * size.height + (1 << 20),
                              streamed: false)
        case .png:
            guard let planned = PNGShrinkOnLoad.plannedDecode(data, minimum: minimum) else {
                return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 1 << 20, streamed: false)
            }
            // libpng keeps two rows and zlib's window; the shrinker one row and its sums.
            let rows = full.width * planned.channels * (planned.streamed ? 4 : 2) + (planned.streamed ? planned.size.width * 32 : 0)
            return DecodePlan(size: planned.size, channels: planned.channels, scratchBytes: rows + (1 << 20),
                              streamed: planned.streamed)
        case .webp:
            let pixels = full.width * full.height
            if header.frameCount > 1 {
                return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 2 * 4 * pixels, streamed: false)
            }
            let lossless = Self.isLossless(data)
            let size = header.hasAlpha ? full : WebPDecoder.scaledSize(full, minimum: minimum)
            var scratch = 1 << 20
            if lossless { scratch += 4 * pixels } else if header.hasAlpha { scratch += pixels }
            return DecodePlan(size: size, channels: header.hasAlpha ? 4 : 3, scratchBytes: scratch, streamed: false)
        case .gif:
            // The RGBA canvas, a saved rectangle (disposal 3) and giflib's tables.
            let pixels = full.width * full.height
            return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 2 * 4 * pixels + (1 << 16),
                              streamed: false)
        case .avif, .heic:
            // dav1d / libde265 hold the YUV frame (up to 4:4:4 at 16 bits a sample for 10/12-bit
            // files) and their state; libheif converts into an RGB(A) image of its own before the copy.
            // A grid holds its tiles besides: libavif 0.11 decodes them all before assembling the
            // grid, libheif one at a time. (A file whose sizes lie never gets here: `CodedLayout`.)
            let pixels = full.width * full.height
            let layout = (try? CodedLayout.read(data, format: format)) ?? nil
            let coded = max(layout?.codedPixels ?? pixels, pixels)
            var tiles = 0
            if let layout, layout.isGrid {
                tiles = 6 * (format == .avif ? layout.codedPixels : layout.largestCodedPixels)
            }
            return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 8 * pixels + tiles + (4 << 20),
                              streamed: false, codedPixels: coded)
        case .svg:
            // `header` is the raster's (`VectorRaster`): cairo's premultiplied surface, the filter
            // surfaces alive at once (`VectorFacts.surfaces`), librsvg's tree (about 1 KB an element).
            let pixels = full.width * full.height
            let facts = header.vector
            let surfaces = facts?.surfaces ?? 1
            return DecodePlan(size: full, channels: 4, scratchBytes: 4 * pixels * surfaces + 1024 * (facts?.elements ?? 0) + (8 << 20),
                              streamed: false)
        case .tiff:
            // libtiff's RGBA reader fills a raster of 4 B/px, copied into the buffer; libtiff holds
            // one strip or tile beside it (bounded by `TIFFDecoder.checkGeometry`).
            let pixels = full.width * full.height
            return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 4 * pixels + (2 << 20),
                              streamed: false)
        case .bmp, .ico:
            // Read straight from the file's rows into the buffer (`DIBImage`); an ICO's PNG entry
            // goes through libpng, which holds a row or two.
            return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 1 << 20, streamed: false)
        case .jxl:
            // libjxl 0.7 decodes into float planes of its own (3 or 4 × 4 B/px) and more: measured
            // with djxl at 15-21 B/px over a baseline on 4 MP images (lossy, lossless, solid).
            let pixels = full.width * full.height
            return DecodePlan(size: full, channels: header.hasAlpha ? 4 : 3, scratchBytes: 20 * pixels + (4 << 20),
                              streamed: false)
        }
    }

    /// The component count of a JPEG's frame header (SOFn), nil when none is found.
    static func jpegComponents(_ data: [UInt8]) -> Int? {
        var pos = 2
        while pos + 10 <= data.count, data[pos] == 0xFF {
            let marker = data[pos + 1]
            if marker == 0xFF { pos += 1; continue }
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                return Int(data[pos + 9])
            }
            pos += 2 + (Int(data[pos + 2]) << 8 | Int(data[pos + 3]))
        }
        return nil
    }

    /// True when a RIFF/WEBP file carries a VP8L (lossless) bitstream.
    public static func isLossless(_ data: [UInt8]) -> Bool {
        var pos = 12
        while pos + 8 <= data.count {
            let tag = (data[pos], data[pos + 1], data[pos + 2], data[pos + 3])
            if tag == (0x56, 0x50, 0x38, 0x4C) { return true }                         // "VP8L"
            if tag == (0x56, 0x50, 0x38, 0x20) { return false }                        // "VP8 "
            let length = Int(data[pos + 4]) | Int(data[pos + 5]) << 8 | Int(data[pos + 6]) << 16 | Int(data[pos + 7]) << 24
            pos += 8 + length + (length & 1)
        }
        return false
    }
}
