import KilnModel
@testable import KilnCodecs
import Testing

/// SVG drawn by librsvg through the sanitiser: sizes, colours, alpha and the raster size.
@Suite(.enabled(if: SVGDecoder.isAvailable, "librsvg is part of the build's packages (scripts/lib.sh)"))
struct SVGDecoderTests {
    /// Left half opaque red, right half blue at half opacity, on a 20 x 10 viewBox.
    static let halves = Array("""
        <svg xmlns="http://www.w3.org/2000/svg" width="40" height="20" viewBox="0 0 20 10">
        <rect width="10" height="10" fill="#ff0000"/><rect x="10" width="10" height="10" fill="#0000ff" fill-opacity="0.5"/></svg>
        """.utf8)

    static func pixel(_ b: PixelBuffer, _ x: Int, _ y: Int) -> [UInt8] { b.pixel(x: x, y: y) }

    @Test func headerIsTheIntrinsicSizeWithAlpha() throws {
        let header = try SVGDecoder().readHeader(Self.halves)
        #expect(header.format == .svg && header.size == PixelSize(width: 40, height: 20) && header.hasAlpha)
        #expect(header.vector?.elements == 3)
    }

    @Test func drawsAtTheIntrinsicSize() throws {
        let image = try SVGDecoder().decode(Self.halves, options: DecodeOptions())
        let b = image.buffer
        #expect(b.size == PixelSize(width: 40, height: 20) && b.channels == 4)
        #expect(Self.pixel(b, 5, 5) == [255, 0, 0, 255])
        // Straight alpha: the blue is still 255 where it is half transparent.
        let blue = Self.pixel(b, 30, 10)
        #expect(blue[0] == 0 && blue[1] == 0 && blue[2] >= 253 && (127...128).contains(blue[3]))
    }

    @Test func vectorsAreDrawnAtTheRasterSizeNotScaledAfter() throws {
        let image = try SVGDecoder().decode(Self.halves, options: DecodeOptions(rasterSize: PixelSize(width: 400, height: 200)))
        let b = image.buffer
        #expect(b.size == PixelSize(width: 400, height: 200))
        // The edge between the halves stays one pixel sharp at 10x: a scaled raster would blur it over ~10.
        #expect(Self.pixel(b, 198, 100) == [255, 0, 0, 255])
        #expect(Self.pixel(b, 201, 100)[3] < 130)
        // A stretched raster (resize force) draws each axis to its own scale.
        let stretched = try SVGDecoder().decode(Self.halves, options: DecodeOptions(rasterSize: PixelSize(width: 40, height: 200)))
        #expect(Self.pixel(stretched.buffer, 5, 190) == [255, 0, 0, 255])
    }

    @Test func rasterIsCheckedAgainstTheLimitsBeforeDrawing() {
        let options = DecodeOptions(limits: DecodeLimits(maxPixels: 10_000), rasterSize: PixelSize(width: 1000, height: 500))
        #expect(throws: DecodeError.overLimit("1000x500 is over the limit of 10000 pixels")) {
            try SVGDecoder().decode(Self.halves, options: options)
        }
    }

    @Test func externalImageIsNeverLoaded() throws {
        // The href is removed by the sanitiser; the image's box stays empty (transparent).
        let svg = Array("<svg width=\"10\" height=\"10\"><image href=\"file:///usr/share/pixmaps/debian-logo.png\" width=\"10\" height=\"10\"/></svg>".utf8)
        let b = try SVGDecoder().decode(svg, options: DecodeOptions()).buffer
        #expect(b.pixels.allSatisfy { $0 == 0 })
    }

    @Test func librsvgRefusalIsCorrupt() {
        // Well-formed for the tokenizer, but not UTF-8: libxml2 (inside librsvg) refuses it.
        let bad: [UInt8] = Array("<svg width=\"4\" height=\"4\"><text>".utf8) + [0xFF, 0xFE] + Array("</text></svg>".utf8)
        #expect {
            try SVGDecoder().decode(bad, options: DecodeOptions())
        } throws: { error in
            guard case DecodeError.corrupt(let m) = error else { return false }
            return m.hasPrefix("SVG: librsvg") && !m.contains("\n")
        }
    }
}
