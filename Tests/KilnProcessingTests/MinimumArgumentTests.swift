import Testing
import KilnModel
@testable import KilnProcessing

/// No argument yields a black or empty picture: every float-taking step at its smallest accepted
/// value, and the smallest integer arguments of the shapes, keep the picture's mean. Sigmas
/// below `SpecParser.minimumSigma` (0.1) are no-ops: the parser drops them, the filters return
/// the image unchanged.
@Suite struct MinimumArgumentTests {
    static let image = PixelStats.photoLike(width: 96, height: 64)

    func mean(_ image: PixelBuffer) -> Double { PixelStats.mean(image) }

    @Test(arguments: [1e-300, 1e-170, 1e-32, 1e-4, 0.0999])
    func tinySigmasLeaveTheImageUnchanged(sigma: Double) throws {
        let context = PixelStats.context(Self.image)
        #expect(try GaussianBlur(sigma: sigma).process(Self.image, context: context) == Self.image)
        #expect(try Sharpen(sigma: sigma).process(Self.image, context: context) == Self.image)
    }

    @Test func theSmallestEffectiveSigmaKeepsTheMean() throws {
        let context = PixelStats.context(Self.image)
        let input = mean(Self.image)
        for processor in [GaussianBlur(sigma: SpecParser.minimumSigma) as any ImageProcessing,
                          Sharpen(sigma: SpecParser.minimumSigma), GaussianBlur(sigma: 0.3), Sharpen(sigma: 0.3)] {
            let out = try processor.process(Self.image, context: context)
            #expect(out.size == Self.image.size)
            #expect(abs(mean(out) - input) < 1, "\(processor.identifier): mean \(mean(out)) vs \(input)")
        }
    }

    @Test func theSmallestShapesAndPaddingKeepThePicture() throws {
        let context = PixelStats.context(Self.image)
        let input = mean(Self.image)
        let rounded = try RoundedCorners(radius: 1).process(Self.image, context: context)
        #expect(rounded.size == Self.image.size && abs(mean(rounded) - input) < 3)
        let padded = try Pad(Padding(top: 0, right: 0, bottom: 0, left: 0)).process(Self.image, context: context)
        #expect(padded.size == Self.image.size && abs(mean(padded) - input) < 1)
        let circle = try Circle().process(Self.image, context: context)
        #expect(circle.width == 64 && circle.height == 64 && mean(circle) > 10)
    }
}
