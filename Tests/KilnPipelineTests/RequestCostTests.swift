import Foundation
import Testing
import KilnTestSupport
import KilnTestBytes
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// The per-request budgets (issue 14): the cost planned from the header before decoding, the
/// 413 naming the limit, and the output-size check after encoding.
@Suite struct RequestCostTests {
    typealias F = CachingFixtures

    static let limits = LimitsConfiguration()
    static let photo = ImageHeader(format: .jpeg, width: 4000, height: 3000, frameCount: 1, orientation: 1, hasAlpha: false)
    /// The bench photo's size in bytes, as the plan counts the file it holds while decoding.
    static let photoBytes = [UInt8](repeating: 0, count: 3_400_000)

    /// The first bytes of a PNG as far as the plan reads them: signature, IHDR, an empty IDAT, IEND.
    static func pngHead(width: Int, height: Int, colourType: UInt8, interlaced: Bool = false) -> [UInt8] {
        TinyPNGWriter.png(width: width, height: height, colorType: colourType, interlaced: interlaced, idat: [])
    }

    static func cost(_ spec: String, header: ImageHeader = photo, data: [UInt8] = photoBytes,
                     accept: String? = nil) throws -> RequestCost {
        let request = try SpecParser().parse(spec, isDecoded: true)
        return RequestCost.plan(request, format: header.format, data: data, header: header, accepted: accepting(accept),
                                output: OutputConfiguration())
    }

    static let fifteenSharpens = Array(repeating: "sh:50", count: 15).joined(separator: "/")

    @Test(arguments: [
        // The probe's heavy URLs: each took seconds and GBs before the budget.
        ("/el:1/w:8164/f:webp/ll:1/p.jpg", "encode WebP"),
        ("/el:1/w:8164/\(fifteenSharpens)/p.jpg", "sharpen:50 to 8164x6123"),
        ("/el:1/rs:8000:6000:force/bl:50/sh:40/bl:49/p.jpg", "sharpen:40 to 8000x6000"),
    ])
    func heavyPhotoRequestsAreOverTheMemoryBudget(spec: String, peak: String) throws {
        let cost = try Self.cost(spec)
        #expect(cost.peakBytes > Self.limits.maxRequestMemory, "\(spec): \(cost.steps)")
        #expect(cost.peakStep?.name == peak)
        let excess = BudgetExcess.memory(needed: cost.peakBytes, limit: Self.limits.maxRequestMemory, step: peak)
        #expect(excess.message.contains("more than limits.max_request_memory (256 MiB)"))
        #expect(excess.message.hasPrefix("needs about "), "\(excess.message)")
    }

    /// A resize is named by its kind: the URL wrote `w:8164`, never the canonical `rs:8164:0:fit`.
    @Test func aResizeStepIsNamedByItsKind() throws {
        let cost = try Self.cost("/el:1/w:8164/p.jpg")
        #expect(cost.steps.contains { $0.name == "resize to 8164x6123" }, "\(cost.steps)")
        #expect(!cost.steps.contains { $0.name.hasPrefix("rs:") })
    }

    @Test func padBlurSharpenRoundedOnA39MPPNGIsOverTheMemoryBudget() throws {
        let header = ImageHeader(format: .png, width: 7000, height: 5600, frameCount: 1, orientation: 1, hasAlpha: false)
        let cost = try Self.cost("/pad:20/bl:10/sh:5/rounded:200/a.png", header: header,
                                 data: Self.pngHead(width: 7000, height: 5600, colourType: 2))
        // Blur or sharpen of 39 MP RGBA (pad adds alpha): input and output are 157 MB each.
        #expect(cost.peakBytes > Self.limits.maxRequestMemory)
        let sharpen = try #require(cost.steps.first { $0.name.hasPrefix("sharpen:5") })
        #expect(sharpen.bytes > Self.limits.maxRequestMemory, "\(cost.steps)")
    }

    @Test func manySharpensAreOverTheWorkBudgetWhenMemoryIsRaised() throws {
        let cost = try Self.cost("/el:1/w:8164/\(Self.fifteenSharpens)/p.jpg")
        // 15 sharpens of 50 MP at 8 passes each, about 6000 megapixel-passes.
        #expect(cost.work > 5_500 && cost.work > Double(Self.limits.maxRequestWork))
        let one = try Self.cost("/el:1/w:8164/sh:50/p.jpg")
        #expect(one.work < cost.work / 8)
    }

    @Test func aThumbnailOfA50MPPNGIsWithinTheDefaults() throws {
        for colourType: UInt8 in [6, 2] {
            let header = ImageHeader(format: .png, width: 8000, height: 6250, frameCount: 1, orientation: 1,
                                     hasAlpha: colourType == 6)
            let data = Self.pngHead(width: 8000, height: 6250, colourType: colourType)
            let cost = try Self.cost("/rs:300:300/a.png", header: header, data: data)
            #expect(cost.peakBytes < 32 << 20, "streamed: no full-size buffer (\(cost.steps))")
            #expect(cost.work < Double(Self.limits.maxRequestWork))
            // Without a leading resize the whole source is decoded, and counted.
            let whole = try Self.cost("/gs/a.png", header: header, data: data)
            #expect(whole.peakBytes >= 8000 * 6250 * (colourType == 6 ? 8 : 6))
        }
    }

    @Test func anInterlacedPNGIsCountedWhole() throws {
        let header = ImageHeader(format: .png, width: 8000, height: 6250, frameCount: 1, orientation: 1, hasAlpha: true)
        let cost = try Self.cost("/rs:300:300/a.png", header: header,
                                 data: Self.pngHead(width: 8000, height: 6250, colourType: 6, interlaced: true))
        #expect(cost.peakBytes > 200_000_000, "Adam7 is not read row by row: \(cost.steps)")
    }

    @Test func aThumbnailOfA50MPWebPOrJPEGIsWithinTheDefaults() throws {
        let webp = ImageHeader(format: .webp, width: 8660, height: 5773, frameCount: 1, orientation: 1, hasAlpha: false)
        let lossy = Array("RIFF\0\0\0\0WEBPVP8 ".utf8) + [0, 0, 0, 0]
        let webpCost = try Self.cost("/rs:300:300/a.webp", header: webp, data: lossy + [UInt8](repeating: 0, count: 4_000_000))
        #expect(webpCost.peakBytes < Self.limits.maxRequestMemory, "\(webpCost.steps)")
        let jpeg = ImageHeader(format: .jpeg, width: 8660, height: 5773, frameCount: 1, orientation: 6, hasAlpha: false)
        let jpegCost = try Self.cost("/rs:300:300/a.jpg", header: jpeg, data: [UInt8](repeating: 0, count: 20_000_000))
        #expect(jpegCost.peakBytes < 64 << 20, "DCT scaling: \(jpegCost.steps)")
    }

    @Test(arguments: [
        "/rs:300:300/p.jpg", "/w:800/q:80/p.jpg", "/rs:1200:800:fill/sh:1/p.jpg", "/f:png/p.jpg", "/f:webp/p.jpg",
        "/p.jpg", "/rs:2000:2000/bl:3/p.jpg", "/circle/rs:600:600/f:png/p.jpg", "/rot:90/gs/w:1000/p.jpg",
        "/rs:300:200:fill/f:auto/p.jpg", "/bl:5/p.jpg", "/sh:2/q:90/p.jpg", "/bl:50/f:webp/p.jpg",
    ])
    func ordinaryPhotoRequestsAreWithinTheDefaults(spec: String) throws {
        let cost = try Self.cost(spec, accept: "image/webp")
        #expect(cost.peakBytes < Self.limits.maxRequestMemory, "\(spec): \(cost.steps)")
        #expect(cost.work < Double(Self.limits.maxRequestWork), "\(spec): \(cost.work)")
    }

    @Test func theModelFollowsTheMeasuredPeaks() throws {
        // Peak RSS above a tiny render's, measured with /usr/bin/time on `kiln process` (MB).
        let measured: [(String, Double)] = [("/bl:5/p.jpg", 99), ("/sh:5/p.jpg", 116), ("/bl:50/p.jpg", 100), ("/f:png/p.jpg", 78),
                                            ("/f:webp/ll:1/p.jpg", 380), ("/el:1/w:6000/p.jpg", 113)]
        for (spec, mb) in measured {
            let planned = Double(try Self.cost(spec).peakBytes) / 1e6
            // Honest: never below what was measured, and not wildly above.
            #expect(planned >= mb * 0.95 && planned <= mb * 1.35, "\(spec): planned \(planned) MB, measured \(mb) MB")
        }
    }

    @Test func theReasonsNameTheLimitAndAreTooLarge() {
        let memory = PipelineFailure(BudgetExcess.memory(needed: 1_503_238_554, limit: 256 << 20, step: "encode WebP"))
        #expect(memory.kind == .tooLarge && memory.kind.isRememberable)
        #expect(memory.message == "needs about 1.4 GiB of memory (at encode WebP), more than limits.max_request_memory (256 MiB)")
        let work = PipelineFailure(BudgetExcess.work(needed: 6012.3, limit: 3000))
        #expect(work.message == "needs about 6013 megapixel-passes of work, more than limits.max_request_work (3000)")
        let bytes = PipelineFailure(BudgetExcess.outputBytes(bytes: 82_837_504, limit: 32 << 20, planned: false))
        #expect(bytes.message == "the result is 79 MiB, more than limits.max_output_bytes (32 MiB)")
        #expect(BudgetExcess.bytes(1536 << 10) == "1.5 MiB")
    }

    /// A noisy 600x400 JPEG in a fresh folder (about 200 KB as PNG), and a pipeline with `limits`.
    func noisyPipeline(_ tag: String, limits: LimitsConfiguration, output: OutputConfiguration = .init()) throws -> (ImagePipeline, String) {
        let root = F.folder(tag)
        var state: UInt32 = 12345
        let pixels = (0..<(600 * 400 * 3)).map { _ -> UInt8 in
            state = state &* 1_103_515_245 &+ 12345
            return UInt8(truncatingIfNeeded: state >> 16)
        }
        let image = PixelBuffer(width: 600, height: 400, channels: 3, pixels: pixels)
        let png = try Codecs.encoder(for: .png).encode(image, options: EncodeOptions(format: .png))
        try Data(png).write(to: URL(fileURLWithPath: root + "/noise.png"))
        let stages = try PipelineStages.standard(source: try FileSource(root: root, maxFileBytes: 100 << 20))
        return (ImagePipeline(stages: stages, limits: limits, output: output), root)
    }

    @Test func aResultOverMaxOutputBytesIsRefusedAfterEncoding() throws {
        var limits = LimitsConfiguration()
        limits.maxOutputBytes = 100_000
        let (pipeline, root) = try noisyPipeline("budget-out", limits: limits)
        defer { F.remove(root) }
        let small = try pipeline.render(try SpecParser().parse("/w:100/noise.png", isDecoded: true))
        #expect(small.data.count < 100_000)
        do {
            _ = try pipeline.render(try SpecParser().parse("/noise.png", isDecoded: true))
            Issue.record("a 700 KB PNG passed a 100 KB limit")
        } catch let e as BudgetExcess {
            guard case let .outputBytes(bytes, limit, planned) = e else { Issue.record("\(e)"); return }
            #expect(bytes > 600_000 && limit == 100_000 && !planned)
        }
        let whole = try SpecParser().parse("/noise.png", isDecoded: true)
        do {
            _ = try pipeline.image(for: whole, accepted: accepting(nil))
            Issue.record("rendered")
        } catch {
            #expect(error.kind == .tooLarge && error.message.contains("limits.max_output_bytes (98 KiB)"))
        }
    }

    @Test func storedPNGIsRefusedBeforeDecodingFromItsLowerBound() throws {
        var limits = LimitsConfiguration()
        limits.maxOutputBytes = 500_000
        var output = OutputConfiguration()
        output.pngCompressionLevel = 0
        let (pipeline, root) = try noisyPipeline("budget-stored", limits: limits, output: output)
        defer { F.remove(root) }
        #expect(throws: BudgetExcess.outputBytes(bytes: 400 * (1 + 600 * 3), limit: 500_000, planned: true)) {
            try pipeline.render(try SpecParser().parse("/noise.png", isDecoded: true))
        }
        _ = try pipeline.render(try SpecParser().parse("/w:300/noise.png", isDecoded: true))
    }

    @Test func aLowMemoryLimitRefusesBeforeDecoding() throws {
        var limits = LimitsConfiguration()
        limits.maxRequestMemory = 16 << 20
        let (pipeline, root) = try noisyPipeline("budget-mem", limits: limits)
        defer { F.remove(root) }
        _ = try pipeline.render(try SpecParser().parse("/w:300/noise.png", isDecoded: true))
        let big = try SpecParser().parse("/el:1/w:3000/noise.png", isDecoded: true)
        do {
            _ = try pipeline.image(for: big, accepted: accepting(nil))
            Issue.record("rendered")
        } catch {
            #expect(error.kind == .tooLarge)
            #expect(error.message.contains("more than limits.max_request_memory (16 MiB)"), "\(error.message)")
        }
    }
}
