import KilnModel
@testable import KilnCodecs
import Testing

/// The DCT scale shrink-on-load picks for JPEG (issue 15, op2): every M/8 ≤ 1 of TurboJPEG, the
/// smallest whose output covers the minimum the pipeline asks for (output × 1.25).
@Suite struct JPEGScaleChoiceTests {
    @Test func turboJPEGOffersEveryEighth() {
        let factors = TurboJPEGHandle.reducingFactors.map { $0.num * 8 / $0.denom }
        #expect(factors == [8, 7, 6, 5, 4, 3, 2, 1])
    }

    /// op2: 1920×1080 → width 800 asks for 1000×563 (800 × 1.25). 1/2 gives 960 px, too few
    /// (Lanczos from it scores SSIM 0.980 against a full decode); 5/8 gives 1200×675 (0.995).
    @Test func opTwoDecodesAtFiveEighths() {
        let full = PixelSize(width: 1920, height: 1080)
        let factor = TurboJPEGHandle.factor(for: full, minimum: PixelSize(width: 1000, height: 563))
        #expect(factor.num * 8 / factor.denom == 5)
        let header = ImageHeader(format: .jpeg, width: 1920, height: 1080, frameCount: 1, orientation: 1, hasAlpha: false)
        let plan = DecodePlan.plan(format: .jpeg, data: [], header: header, minimum: PixelSize(width: 1000, height: 563))
        #expect(plan.size == PixelSize(width: 1200, height: 675))
    }

    /// The decoder follows the plan: a real 5/8 decode has the planned size.
    @Test func decoderFollowsThePlan() throws {
        let data = try Corpus.data("exif_Portrait_6.jpg")   // stored 1800×1200
        let image = try JPEGDecoder(colorConverter: nil).decode(data, options: DecodeOptions(minimumSize: PixelSize(width: 1000, height: 700)))
        #expect(image.buffer.width == 1125 && image.buffer.height == 750)
    }
}
