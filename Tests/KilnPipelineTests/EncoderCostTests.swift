import Testing
import KilnModel
import KilnProcessing
@testable import KilnPipeline

/// Encodes priced by format, quality and effort (`EncoderCost`), and scaled watermarks by their
/// own pixels (issue 36 §3): the probe's AVIF `max_bytes` URL and 8 scaled 4000×4000 marks on a
/// 100-frame GIF are refused before any work instead of running into the render deadline.
@Suite struct EncoderCostTests {
    static let noise = ImageHeader(format: .jpeg, width: 3900, height: 2900, frameCount: 1, orientation: 1, hasAlpha: false)

    static func options(_ format: ImageFormat, quality: Int, webpMethod: Int = 2, avifSpeed: Int = 9) -> EncodeOptions {
        var o = OutputConfiguration().encodeOptions(format: format)
        o.quality = quality
        o.webpMethod = webpMethod
        o.avifSpeed = avifSpeed
        return o
    }

    /// JPEG's encode work by chroma subsampling, as measured: 4:4:4 1.3× 4:2:0, 4:2:2 between.
    @Test func jpegWorkFollowsTheChromaSubsampling() {
        var o = OutputConfiguration().encodeOptions(format: .jpeg)
        let base = EncoderCost.work(o)
        o.chromaSubsampling = .s422
        let half = EncoderCost.work(o)
        o.chromaSubsampling = .s444
        let full = EncoderCost.work(o)
        #expect(base < half && half < full)
        #expect(abs(full / base - 1.3) < 1e-9)
    }

    @Test func pricesRiseWithQualityAndEffort() {
        for format in [ImageFormat.avif, .webp] {
            let qualities = [1, 30, 50, 65, 80, 90, 95, 100]
            let work = qualities.map { EncoderCost.work(Self.options(format, quality: $0)) }
            let bytes = qualities.map { EncoderCost.bytesPerPixel(Self.options(format, quality: $0), channels: 3) }
            #expect(work == work.sorted() && work.first! < work.last!, "\(format) \(work)")
            #expect(bytes == bytes.sorted() && bytes.first! < bytes.last!, "\(format) \(bytes)")
        }
        // The measured columns are the table's values (noise, ms per megapixel / 10).
        #expect(EncoderCost.work(Self.options(.avif, quality: 100)) == 46 && EncoderCost.work(Self.options(.webp, quality: 80)) == 15.5)
        #expect(EncoderCost.work(Self.options(.webp, quality: 80, webpMethod: 6)) > 5 * EncoderCost.work(Self.options(.webp, quality: 80)))
        #expect(EncoderCost.bytesPerPixel(Self.options(.webp, quality: 80, webpMethod: 4), channels: 3) > 15)
        #expect(EncoderCost.work(Self.options(.avif, quality: 80, avifSpeed: 8)) > 2 * EncoderCost.work(Self.options(.avif, quality: 80)))
    }

    /// The probe's URL peaked at 314 MB and ran 6 encodes past the 10 s deadline: over both budgets now.
    @Test func theProbesAVIFSearchIsRefused() throws {
        let request = try SpecParser().parse("/q:100/mb:4000000/f:avif/n.jpg", isDecoded: true)
        let cost = RequestCost.plan(request, format: .jpeg, data: [UInt8](repeating: 0, count: 13_000_000), header: Self.noise,
                                    accepted: .sourceOnly, output: OutputConfiguration())
        let limits = LimitsConfiguration()
        #expect(cost.peakBytes > limits.maxRequestMemory, "\(cost.peakBytes)")
        #expect(cost.work > Double(limits.maxRequestWork), "\(cost.work)")
        // One encode at the default quality of a 1080p result stays well inside both.
        let small = RequestCost.plan(try SpecParser().parse("/w:1920/f:avif/n.jpg", isDecoded: true), format: .jpeg,
                                     data: [UInt8](repeating: 0, count: 13_000_000), header: Self.noise,
                                     accepted: .sourceOnly, output: OutputConfiguration())
        #expect(small.peakBytes < limits.maxRequestMemory / 2 && small.work < Double(limits.maxRequestWork) / 10)
    }

    /// A scaled mark is resampled from its own pixels: a 2000×2000 mark costs several times what a
    /// 40×40 one drawn at the same size costs.
    @Test func aScaledMarkIsPricedByItsOwnPixels() throws {
        func library(side: Int) -> WatermarkLibrary {
            WatermarkLibrary(["logo": WatermarkImage(decoded: PixelBuffer(width: side, height: side, channels: 4,
                                                                          pixels: [UInt8](repeating: 200, count: side * side * 4)),
                                                     identity: "\(side)")])
        }
        let parser = SpecParser(watermarks: ["logo"])
        let request = try parser.parse("/wm:logo:0.5:center:0:0:0.5/f:png/a.gif", isDecoded: true)
        let header = ImageHeader(format: .gif, width: 500, height: 500, frameCount: 1, orientation: 1, hasAlpha: false)
        func step(_ side: Int) throws -> RequestCost.Step {
            let plan = RequestCost.plan(request, format: .gif, data: [], header: header, accepted: .sourceOnly,
                                        output: OutputConfiguration(), marks: library(side: side))
            return try #require(plan.steps.first { $0.name.hasPrefix("watermark:") })
        }
        let small = try step(40), large = try step(2000)
        #expect(large.work > 5 * small.work, "\(small.work) vs \(large.work)")
        #expect(large.bytes > small.bytes)
        // 8 marks of 4000×4000 on 100 frames: far over the work budget (the animation's plan is per frame).
        #expect(try step(4000).work * 8 * 100 > Double(LimitsConfiguration().maxRequestWork))
    }
}
