import Foundation
import Testing
import KilnTestSupport
import KilnTestBytes
import KilnModel
@testable import KilnPipeline

/// `max_bytes`: the quality search against an encoder whose size is a known function of the
/// quality, through the whole pipeline (the standard sniffer, a stub decoder).
@Suite struct ByteBudgetTests {
    /// Answers `size(quality)` bytes and records the qualities asked for.
    final class SizedEncoder: ImageEncoding, ImageEncoderProviding, @unchecked Sendable {
        let size: (Int) -> Int
        private let lock = NSLock()
        private var asked: [Int] = []
        init(_ size: @escaping (Int) -> Int) { self.size = size }
        var qualities: [Int] { lock.withLock { asked } }
        func encoder(for format: ImageFormat) -> any ImageEncoding { self }
        func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
            lock.withLock { asked.append(options.quality) }
            return [UInt8](repeating: UInt8(options.quality), count: size(options.quality))
        }
    }

    static let image = PixelBuffer(width: 12, height: 8, channels: 3, pixels: (0..<288).map { UInt8($0 % 251) })
    static let png = TinyPNGWriter.png(width: 12, height: 8, bitDepth: 8, colorType: 2, samples: image.pixels.map(Int.init))

    func render(_ spec: String, size: @escaping (Int) -> Int) throws -> (PipelineResult, SizedEncoder) {
        let files = MemorySource()
        files.put("a.png", Self.png)
        var stages = try PipelineStages.standard(source: files)
        stages.decoders = StubDecoder(image: Self.image)
        let encoder = SizedEncoder(size)
        stages.encoders = encoder
        let request = try SpecParser().parse(spec, isDecoded: true)
        return (try ImagePipeline(stages: stages).image(for: request, accepted: accepting(nil)), encoder)
    }

    /// JPEG-like growth: convex in the quality.
    static func convex(_ q: Int) -> Int { Int(200 * exp(Double(q) / 18)) }

    @Test(arguments: [1_000, 2_500, 7_777, 20_000, 60_000])
    func answersTheHighestQualityThatFits(budget: Int) throws {
        let (result, encoder) = try render("/mb:\(budget)/f:jpeg/a.png", size: Self.convex)
        let q = try #require(result.quality)
        #expect(result.data.count <= budget)
        #expect(result.data.first == UInt8(q))
        #expect(result.fitsByteBudget == true)
        #expect(encoder.qualities.count <= ByteBudget.maximumEncodes)
        #expect(encoder.qualities.first == 80)   // starts at the default quality
        // The highest that fits, or the search ran out of encodes within a few steps of it.
        let best = (10...80).last { Self.convex($0) <= budget }!
        #expect(q <= best && best - q <= 2, "q \(q), best \(best), asked \(encoder.qualities)")
        let timing = try #require(result.timeline.phases.first { $0.name == "encode" }?.description)
        #expect(timing.hasPrefix("encodes=\(encoder.qualities.count) q=\(q)"))
    }

    @Test func aFirstEncodeThatFitsIsTheOnlyOne() throws {
        let (result, encoder) = try render("/mb:100000/q:90/f:webp/a.png", size: Self.convex)
        #expect(encoder.qualities == [90])
        #expect(result.quality == 90 && result.fitsByteBudget == true)
        #expect(result.timeline.phases.first { $0.name == "encode" }?.description == "encodes=1 q=90")
    }

    @Test func nothingFitsAnswersTheSmallestAndSaysSo() throws {
        let (result, encoder) = try render("/mb:50/f:avif/a.png", size: Self.convex)
        #expect(encoder.qualities == [65, ByteBudget.minimumQuality])   // AVIF's default, then the floor
        #expect(result.quality == ByteBudget.minimumQuality && result.data.count == Self.convex(10))
        #expect(result.fitsByteBudget == false)
        #expect(result.timeline.phases.first { $0.name == "encode" }?.description?.hasSuffix("exceeded") == true)
    }

    @Test func pngIsEncodedOnceAndJudged() throws {
        // A PNG source without f: stays PNG: no quality to search.
        let (result, encoder) = try render("/mb:50/a.png", size: { _ in 500 })
        #expect(encoder.qualities.count == 1)
        #expect(result.quality == nil && result.fitsByteBudget == false)
        let (fits, _) = try render("/mb:5000/a.png", size: { _ in 500 })
        #expect(fits.fitsByteBudget == true)
        let (none, _) = try render("/a.png", size: { _ in 500 })
        #expect(none.fitsByteBudget == nil)
    }

    @Test func thePlanCountsEveryEncode() throws {
        let header = ImageHeader(format: .jpeg, width: 4000, height: 3000, frameCount: 1, orientation: 1, hasAlpha: false)
        let data = [UInt8](repeating: 0, count: 3_400_000)
        func work(_ spec: String) throws -> (Double, Double) {
            let request = try SpecParser().parse(spec, isDecoded: true)
            let cost = RequestCost.plan(request, format: .jpeg, data: data, header: header, accepted: accepting(nil),
                                        output: OutputConfiguration())
            return (cost.work, cost.steps.last!.work)
        }
        let (plain, encode) = try work("/f:webp/p.jpg")
        let (budgeted, encodes) = try work("/mb:10000/f:webp/p.jpg")
        #expect(encodes == Double(ByteBudget.maximumEncodes) * encode)
        #expect(budgeted - plain == encodes - encode)
        // A trim is planned as a scan and a copy of the full decode (no shrink-on-load).
        let (trimmed, _) = try work("/t:10/w:300/p.jpg")
        let (resized, _) = try work("/w:300/p.jpg")
        #expect(trimmed > resized)
    }
}
