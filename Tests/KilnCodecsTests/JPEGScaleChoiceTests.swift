import KilnModel
@testable import KilnCodecs
import Testing

/// The DCT scale shrink-on-load picks for JPEG (issue 15, op2; issue 29): every M/8 ≤ 1 of
/// TurboJPEG whose output covers the minimum the pipeline asks for (output × 1.25), the cheapest
/// in decode + resize by the measured table of `TurboJPEGHandle.relativeCost`.
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

    /// 7/8 has no SIMD IDCT and costs more than a full decode plus the larger resize: a minimum
    /// only 7/8 covers decodes at full size; the other scales are each cheaper than every larger one.
    @Test func sevenEighthsIsNeverChosen() {
        let full = PixelSize(width: 1920, height: 1080)
        let factor = TurboJPEGHandle.factor(for: full, minimum: PixelSize(width: 1500, height: 844))
        #expect(factor.num * 8 / factor.denom == 8)
        let totals = TurboJPEGHandle.reducingFactors.map { TurboJPEGHandle.totalCost($0) }
        for (index, total) in totals.enumerated() where index >= 2 {
            #expect(total < totals[0..<index].min()!, "scale \(8 - index)/8 must be cheaper than every larger one")
        }
        // 6/8 is still taken when it covers (1440 px for a minimum of 1400).
        let threeQuarters = TurboJPEGHandle.factor(for: full, minimum: PixelSize(width: 1400, height: 788))
        #expect(threeQuarters.num * 8 / threeQuarters.denom == 6)
    }
}
