import Testing
import KilnModel
@testable import KilnCodecs

/// What the memory budget learns from a source's bytes before decoding (`DecodePlan`).
@Suite struct DecodePlanTests {
    @Test func jpegComponentsAndWebPKindComeFromTheBytes() throws {
        #expect(DecodePlan.jpegComponents(try Corpus.data("coffee_cmyk_swop_icc.jpg")) == 4)
        #expect(DecodePlan.jpegComponents(try Corpus.data("ljt_testorig.jpg")) == 3)
        #expect(DecodePlan.jpegComponents(try Corpus.data("pillow_hopper_gray.jpg")) == 1)
        #expect(DecodePlan.isLossless(try Corpus.data("imagewebp_lossless_indexed_2bit.webp")))
        #expect(!DecodePlan.isLossless(try Corpus.data("pillow_flower2.webp")))
        #expect(!DecodePlan.isLossless(try Corpus.data("pillow_transparent.webp")))
    }

    @Test func scaledDecodesArePlannedAtTheirScaledSize() throws {
        let jpeg = ImageHeader(format: .jpeg, width: 8000, height: 6000, frameCount: 1, orientation: 1, hasAlpha: false)
        let plan = DecodePlan.plan(format: .jpeg, data: [], header: jpeg, minimum: PixelSize(width: 375, height: 282))
        #expect(plan.size == PixelSize(width: 1000, height: 750) && plan.channels == 3)
        let webp = ImageHeader(format: .webp, width: 8000, height: 6000, frameCount: 1, orientation: 1, hasAlpha: true)
        let alpha = DecodePlan.plan(format: .webp, data: [], header: webp, minimum: PixelSize(width: 375, height: 282))
        #expect(alpha.size == webp.size && alpha.scratchBytes >= 48_000_000, "alpha: full size and its plane")
    }
}
