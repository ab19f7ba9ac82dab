import KilnModel
@testable import KilnCodecs
import Testing

@Suite struct WebPDecoderTests {
    let decoder = WebPDecoder()

    @Test func readsExifOrientation() throws {
        let header = try decoder.readHeader(Corpus.data("pillow_hopper_orientation_3.webp"))
        #expect(header.orientation == 3)
        #expect(try decoder.readHeader(Corpus.data("pillow_flower2.webp")).orientation == 1)
        let reference = try JPEGDecoder().decode(Corpus.data("pillow_hopper.jpg"), options: DecodeOptions()).buffer
        let stored = try decoder.decode(Corpus.data("pillow_hopper_orientation_3.webp"), options: DecodeOptions()).buffer
        #expect(PixelHelpers.meanAbsDiff(PixelHelpers.oriented(stored, 3), reference) < 10)
    }

    @Test func readsICCProfile() throws {
        let image = try decoder.decode(Corpus.data("pillow_flower2.webp"), options: DecodeOptions())
        #expect(image.iccProfile?.count == 3144)
        #expect(try decoder.decode(Corpus.data("coffee_webp_named.png"), options: DecodeOptions()).iccProfile == nil)
    }

    @Test func alphaGivesRGBA() throws {
        let image = try decoder.decode(Corpus.data("pillow_transparent.webp"), options: DecodeOptions())
        #expect(image.header.hasAlpha && image.buffer.channels == 4)
        let alphas = Set(stride(from: 3, to: image.buffer.pixels.count, by: 4).map { image.buffer.pixels[$0] })
        #expect(alphas.contains(0) && alphas.contains(255))
    }

    @Test func animationGivesFirstFrameOnCanvas() throws {
        let data = try Corpus.data("imagewebp_random_lossy_anim.webp")
        let header = try decoder.readHeader(data)
        #expect(header.frameCount == 4)
        #expect(header.size == PixelSize(width: 99, height: 87))
        let image = try decoder.decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 10, height: 10)))
        #expect(image.buffer.size == PixelSize(width: 99, height: 87))   // animations are not scaled
        #expect(Set(image.buffer.pixels).count > 10)
    }

    @Test func animationBombIsRefusedFromTheHeader() throws {
        let header = try decoder.readHeader(Corpus.data("webp_anim_bomb_4000x4000_500frames.webp"))
        #expect(header.frameCount == 500)
        #expect(header.size == PixelSize(width: 4000, height: 4000))
        #expect(decodeFailure { try DecodeLimits().check(header) }?.isOverLimit == true)
    }

    @Test func truncatedAnimationIsCorruptAtTheHeader() throws {
        let error = decodeFailure { try decoder.readHeader(Corpus.data("random_lossy_anim_truncated.webp")) }
        #expect(error?.isCorrupt == true)
    }

    @Test func scaledDecodeCoversMinimumSize() throws {
        let data = try Corpus.data("coffee_webp_named.png")
        let full = try decoder.decode(data, options: DecodeOptions()).buffer
        let half = try decoder.decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 300, height: 200)))
        #expect(half.buffer.size == PixelSize(width: 300, height: 200))
        #expect(half.header.size == PixelSize(width: 600, height: 400))
        let quarter = try decoder.decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 140, height: 100)))
        #expect(quarter.buffer.size == PixelSize(width: 150, height: 100))
        let unscaled = try WebPDecoder(scalesOnLoad: false).decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 300, height: 200)))
        #expect(unscaled.buffer.size == PixelSize(width: 600, height: 400))
        // The scaled pixels are a box reduction of the full decode.
        #expect(PixelHelpers.meanAbsDiff(half.buffer, PixelHelpers.boxHalved(full)) < 3)
    }

    @Test func imagesWithAlphaAreNotScaled() throws {
        let data = try Corpus.data("pillow_transparent.webp")
        let image = try decoder.decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 50, height: 30)))
        #expect(image.buffer.size == PixelSize(width: 200, height: 150) && image.buffer.channels == 4)
    }

    @Test func scaledSizeSelection() {
        let size = PixelSize(width: 600, height: 400)
        #expect(WebPDecoder.scaledSize(size, minimum: nil) == size)
        #expect(WebPDecoder.scaledSize(size, minimum: PixelSize(width: 75, height: 50)) == PixelSize(width: 75, height: 50))
        #expect(WebPDecoder.scaledSize(size, minimum: PixelSize(width: 76, height: 50)) == PixelSize(width: 150, height: 100))
        #expect(WebPDecoder.scaledSize(size, minimum: PixelSize(width: 301, height: 1)) == size)
    }
}
