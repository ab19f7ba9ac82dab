import Foundation
import Testing
import KilnTestSupport
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// Output format limits (WebP 16383 px, JPEG 65535 px): planned before decoding, checked before
/// encoding, a `.tooLarge` failure naming the limit; `f:auto` falls back to a format that holds
/// the result, with a cache key derived once.
@Suite struct FormatLimitTests {
    typealias F = CachingFixtures

    @Test func limitsOfEachFormat() {
        #expect(ImageFormat.webp.maxDimension == 16_383)
        #expect(ImageFormat.jpeg.maxDimension == 65_535)
        #expect(ImageFormat.webp.canHold(PixelSize(width: 16_383, height: 16_383)))
        #expect(!ImageFormat.webp.canHold(PixelSize(width: 16_384, height: 10)))
        #expect(!ImageFormat.webp.canHold(PixelSize(width: 10, height: 20_000)))
        #expect(ImageFormat.jpeg.canHold(PixelSize(width: 20_000, height: 1_200)))
        #expect(!ImageFormat.jpeg.canHold(PixelSize(width: 65_536, height: 1)))
        #expect(ImageFormat.png.canHold(PixelSize(width: 100_000, height: 100_000)))
    }

    @Test func theFailureIsA413KindNamingTheLimit() {
        let failure = PipelineFailure(PipelineError.formatLimit(.webp, PixelSize(width: 20_000, height: 1_200)))
        #expect(failure.kind == .tooLarge && failure.kind.isRememberable)
        #expect(failure.message == "WebP output is limited to 16383x16383 pixels; this result is 20000x1200")
        let jpeg = PipelineFailure(PipelineError.formatLimit(.jpeg, PixelSize(width: 70_000, height: 10)))
        #expect(jpeg.message.hasPrefix("JPEG output is limited to 65535x65535 pixels"))
    }

    @Test func autoFallsBackOnlyWhenWebPCannotHoldTheResult() {
        let auto = OutputOptions(format: .auto)
        let webp = "image/webp,*/*"
        let big = PixelSize(width: 20_000, height: 1_200), small = PixelSize(width: 800, height: 48)
        #expect(auto.resolvedFormat(source: .png, accepted: accepting(webp), size: small, hasAlpha: false) == .webp)
        #expect(auto.resolvedFormat(source: .png, accepted: accepting(webp), size: big, hasAlpha: false) == .png)
        #expect(auto.resolvedFormat(source: .jpeg, accepted: accepting(webp), size: big, hasAlpha: true) == .jpeg)
        #expect(auto.resolvedFormat(source: .webp, accepted: accepting(webp), size: big, hasAlpha: false) == .jpeg)
        #expect(auto.resolvedFormat(source: .webp, accepted: accepting(webp), size: big, hasAlpha: true) == .png)
        #expect(auto.resolvedFormat(source: .webp, accepted: accepting(webp), size: PixelSize(width: 70_000, height: 10),
                                    hasAlpha: false) == .png)
        #expect(auto.resolvedFormat(source: .jpeg, accepted: accepting("image/jpeg"), size: big, hasAlpha: false) == .jpeg)
        // Explicit formats are kept: the pipeline refuses them instead.
        #expect(OutputOptions(format: .format(.webp)).resolvedFormat(source: .png, accepted: accepting(webp), size: big, hasAlpha: false) == .webp)
        #expect(OutputOptions().resolvedFormat(source: .webp, accepted: accepting(webp), size: big, hasAlpha: false) == .webp)
    }

    @Test func autoKeysCoverEveryFormatTheFallbackMayEncode() {
        let output = OutputConfiguration()
        let auto = output.cacheSettings(for: OutputOptions(format: .auto), outputToken: "webp")
        let webp = output.cacheSettings(for: OutputOptions(format: .format(.webp)), outputToken: "webp")
        #expect(auto != webp)
        #expect(auto == output.cacheSettings(for: OutputOptions(format: .auto), outputToken: "source"))
        // The token still follows Accept, so WebP and non-WebP clients keep separate entries.
        #expect(CacheKey.outputToken(OutputOptions(format: .auto), accepted: accepting("image/webp")) == "webp")
    }

    @Test(arguments: [
        ("/w:300/a.png", 20_000, 100, 300, 2),
        ("/w:16384/el:1/a.png", 2_000, 100, 16_384, 819),
        ("/rs:500:500:fill/a.png", 20_000, 100, 500, 100),
        ("/rs:500:500:fill/el:1/a.png", 20_000, 100, 500, 500),
        ("/crop:300:50/pad:10:20/a.png", 20_000, 100, 340, 70),
        ("/crop:300:50:9900:90/a.png", 10_000, 100, 100, 10),
        ("/rot:90/circle/rounded:4/bl:2/a.png", 20_000, 100, 100, 100),
        ("/rot:270/gs/a.png", 20_000, 100, 100, 20_000),
        ("/cut:10:20:30:40/a.png", 1_000, 500, 940, 460),
        ("/cut:10:0:0:40:100:5000/w:50/a.png", 1_000, 500, 50, 245),
    ])
    func plannedSizeFollowsEveryStep(spec: String, w: Int, h: Int, ow: Int, oh: Int) throws {
        let request = try SpecParser().parse(spec, isDecoded: true)
        let planned = request.plannedOutputSize(source: PixelSize(width: w, height: h))
        #expect(planned == PixelSize(width: ow, height: oh))
    }

    @Test func aCutThatLeavesNothingHasNoPlan() throws {
        let request = try SpecParser().parse("/cut:0:600:0:400/a.png", isDecoded: true)
        #expect(request.plannedOutputSize(source: PixelSize(width: 1_000, height: 100)) == nil)
        #expect(request.plannedOutputSize(source: PixelSize(width: 1_001, height: 100)) == PixelSize(width: 1, height: 100))
    }

    @Test func aCropCornerOutsideTheImageHasNoPlan() throws {
        let request = try SpecParser().parse("/crop:10:10:16000:0/a.png", isDecoded: true)
        #expect(request.plannedOutputSize(source: PixelSize(width: 10_000, height: 100)) == nil)
    }

    /// A 20000x40 PNG in a fresh folder, and the standard pipeline reading from it.
    func widePipeline(_ tag: String) throws -> (ImagePipeline, String) {
        let root = F.folder(tag)
        let image = PixelBuffer(width: 20_000, height: 40, channels: 3,
                                pixels: (0..<(20_000 * 40 * 3)).map { UInt8(truncatingIfNeeded: $0 / 97) })
        let png = try Codecs.encoder(for: .png).encode(image, options: EncodeOptions(format: .png))
        try Data(png).write(to: URL(fileURLWithPath: root + "/wide.png"))
        return (ImagePipeline(stages: try .standard(source: try FileSource(root: root, maxFileBytes: 100 << 20))), root)
    }

    @Test func explicitWebPIsRefusedBeforeTheEncoder() throws {
        let (pipeline, root) = try widePipeline("fmt-webp")
        defer { F.remove(root) }
        for spec in ["/f:webp/wide.png", "/gs/f:webp/wide.png"] {
            let request = try SpecParser().parse(spec, isDecoded: true)
            #expect(throws: PipelineError.formatLimit(.webp, PixelSize(width: 20_000, height: 40))) {
                try pipeline.render(request)
            }
            do {
                _ = try pipeline.image(for: request, accepted: accepting(nil))
                Issue.record("\(spec) rendered")
            } catch {
                #expect(error.kind == .tooLarge && error.message.contains("16383"))
            }
        }
    }

    @Test func autoRendersTheSourceFormatWhenWebPCannotHoldIt() throws {
        let (pipeline, root) = try widePipeline("fmt-auto")
        defer { F.remove(root) }
        let big = try pipeline.render(try SpecParser().parse("/f:auto/wide.png", isDecoded: true), accepted: accepting("image/webp"))
        #expect(big.format == .png && big.size == PixelSize(width: 20_000, height: 40))
        let small = try pipeline.render(try SpecParser().parse("/w:1000/f:auto/wide.png", isDecoded: true), accepted: accepting("image/webp"))
        #expect(small.format == .webp && small.size == PixelSize(width: 1_000, height: 2))
    }

    @Test func theCheckBeforeEncodingCatchesWhatThePlanMissed() throws {
        #expect(throws: PipelineError.formatLimit(.webp, PixelSize(width: 16_384, height: 1))) {
            try ImagePipeline.checkFormatLimit(.webp, size: PixelSize(width: 16_384, height: 1))
        }
        try ImagePipeline.checkFormatLimit(.webp, size: PixelSize(width: 16_383, height: 16_383))
        try ImagePipeline.checkFormatLimit(.jpeg, size: PixelSize(width: 65_535, height: 2))
    }
}
