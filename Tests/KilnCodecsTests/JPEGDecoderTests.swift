import KilnModel
@testable import KilnCodecs
import Testing

@Suite struct JPEGDecoderTests {
    let decoder = JPEGDecoder()

    @Test(arguments: 2...8)
    func readsExifOrientationOfHopperFiles(_ orientation: Int) throws {
        let file = "pillow_hopper_orientation_\(orientation).jpg"
        let header = try decoder.readHeader(Corpus.data(file))
        #expect(header.orientation == orientation)
        // Pixel oracle from shared/corpus/README.md: oriented, the file matches pillow_hopper.jpg (≈5).
        let reference = try decoder.decode(Corpus.data("pillow_hopper.jpg"), options: DecodeOptions()).buffer
        let stored = try decoder.decode(Corpus.data(file), options: DecodeOptions()).buffer
        let upright = PixelHelpers.oriented(stored, header.orientation)
        #expect(PixelHelpers.meanAbsDiff(upright, reference) < 10)
        #expect(PixelHelpers.meanAbsDiff(stored, reference) > 30)
    }

    @Test func realPhotoOrientationSix() throws {
        let header = try decoder.readHeader(Corpus.data("exif_Portrait_6.jpg"))
        #expect(header.orientation == 6)
        #expect(header.size == PixelSize(width: 1800, height: 1200))
        #expect(header.displayedSize == PixelSize(width: 1200, height: 1800))
    }

    @Test func plainFileHasOrientationOne() throws {
        #expect(try decoder.readHeader(Corpus.data("pillow_hopper.jpg")).orientation == 1)
    }

    @Test func shrinksOnLoadToOneEighth() throws {
        let data = try Corpus.benchData("photo_4000x3000.jpg")
        let image = try decoder.decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 300, height: 225)))
        #expect(image.buffer.size == PixelSize(width: 500, height: 375))
        #expect(image.header.size == PixelSize(width: 4000, height: 3000))
    }

    @Test func picksTheSmallestCoveringFactor() {
        let size = PixelSize(width: 4000, height: 3000)
        func factor(_ w: Int, _ h: Int) -> Int { let f = TurboJPEGHandle.factor(for: size, minimum: PixelSize(width: w, height: h)); return f.num * 8 / f.denom }
        #expect(factor(500, 375) == 1)
        #expect(factor(501, 375) == 2)     // 1/4 → 1000x750
        #expect(factor(1000, 750) == 2)
        #expect(factor(1001, 10) == 3)     // 3/8 → 1500x1125
        #expect(factor(10, 2999) == 8)
        #expect(factor(5000, 5000) == 8)   // larger than the image: full size
        #expect(TurboJPEGHandle.factor(for: size, minimum: nil) == (1, 1))
        // Odd sizes round up like TJSCALED: 227x149 at 1/8 is 29x19.
        #expect(TurboJPEGHandle.scaled(227, (1, 8)) == 29 && TurboJPEGHandle.scaled(149, (1, 8)) == 19)
    }

    @Test func scaledDecodeOfOddSizeMatchesTJSCALED() throws {
        let image = try decoder.decode(Corpus.data("ljt_testorig.jpg"), options: DecodeOptions(minimumSize: PixelSize(width: 20, height: 10)))
        #expect(image.buffer.size == PixelSize(width: 29, height: 19))
    }

    /// Without colour management (the naive formula) the corpus file, made by Pillow's naive
    /// RGB→CMYK, comes back close to coffee.png; `SRGBConverterTests` covers the managed path.
    @Test func cmykIsConvertedToRGB() throws {
        let cmyk = try JPEGDecoder(colorConverter: nil).decode(Corpus.data("coffee_cmyk_swop_icc.jpg"), options: DecodeOptions())
        let original = try PNGDecoder().decode(Corpus.data("skimage_coffee.png"), options: DecodeOptions())
        #expect(cmyk.buffer.channels == 3)
        let diff = PixelHelpers.meanAbsDiff(cmyk.buffer, original.buffer)
        #expect(diff < 3, "mean abs diff \(diff)")
        // The 557 536-byte CMYK profile from nine APP2 markers, in order (its header holds its size).
        let icc = try #require(cmyk.iccProfile)
        #expect(icc.count == 557_536)
        #expect(Int(icc[0]) << 24 | Int(icc[1]) << 16 | Int(icc[2]) << 8 | Int(icc[3]) == icc.count)
        #expect(Array(icc[36..<40]) == Array("acsp".utf8))
        #expect(Array(icc[16..<20]) == Array("CMYK".utf8))
    }

    @Test func greyExpandsToRGB() throws {
        let image = try decoder.decode(Corpus.data("pillow_hopper_gray.jpg"), options: DecodeOptions())
        #expect(image.buffer.channels == 3)
        let p = image.buffer.pixel(x: 64, y: 64)
        #expect(p[0] == p[1] && p[1] == p[2])
    }

    @Test func collectsICCProfileOfProgressiveAndBaseline() throws {
        for file in ["skimage_rocket.jpg", "rocket_progressive.jpg"] {
            let image = try decoder.decode(Corpus.data(file), options: DecodeOptions())
            #expect(image.iccProfile?.count == 560, "\(file)")
        }
        #expect(try decoder.decode(Corpus.data("pillow_hopper.jpg"), options: DecodeOptions()).iccProfile == nil)
    }

    @Test func warningsCarryLibjpegMessages() throws {
        let truncated = decodeFailure { try decoder.decode(Corpus.data("rocket_truncated_50pct.jpg"), options: DecodeOptions()) }
        #expect(truncated == .corrupt("Premature end of JPEG file"))
        let huffman = decodeFailure { try decoder.decode(Corpus.data("afl_jpeg_000303.jpg"), options: DecodeOptions()) }
        #expect(huffman?.message.hasPrefix("Corrupt JPEG data") == true, "\(String(describing: huffman))")
    }

    @Test func emptyAndGarbageInputAreCorrupt() {
        #expect(decodeFailure { try decoder.readHeader([]) }?.isCorrupt == true)
        #expect(decodeFailure { try decoder.decode([0xFF, 0xD8, 0xFF], options: DecodeOptions()) }?.isCorrupt == true)
    }

    @Test func limitsAreCheckedBeforeDecoding() throws {
        let tight = DecodeOptions(limits: DecodeLimits(maxPixels: 128 * 127))
        let error = decodeFailure { try decoder.decode(Corpus.data("pillow_hopper.jpg"), options: tight) }
        #expect(error?.isOverLimit == true)
    }
}
