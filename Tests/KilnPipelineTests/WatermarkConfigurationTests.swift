import Foundation
import Testing
import KilnModel
import KilnTestBytes
@testable import KilnPipeline

/// `[watermarks]`: files decoded when the pipeline is made (a bad one is a configuration error
/// then, not at the first request), their digest in the cache key, and a render that draws one.
@Suite struct WatermarkConfigurationTests {
    /// A root with a 4×4 opaque grey PNG source and a 2×2 RGBA watermark.
    func makeFolder() throws -> (root: String, mark: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-wm-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: base + "/root", withIntermediateDirectories: true)
        let source = TinyPNGWriter.png(width: 4, height: 4, bitDepth: 8, colorType: 2, samples: Array(repeating: 100, count: 48))
        try Data(source).write(to: URL(fileURLWithPath: base + "/root/a.png"))
        try writeMark(base + "/mark.png", red: 255)
        return (base + "/root", base + "/mark.png")
    }

    func writeMark(_ path: String, red: Int) throws {
        let px = [red, 0, 0, 255]
        let png = TinyPNGWriter.png(width: 2, height: 2, bitDepth: 8, colorType: 6, samples: Array([px, px, px, px].joined()))
        try Data(png).write(to: URL(fileURLWithPath: path))
    }

    func configuration(root: String, marks: [String: String]) throws -> PipelineConfiguration {
        var source = SourceConfiguration()
        source.root = root
        return try PipelineConfiguration(source: source, watermarks: WatermarkConfiguration(paths: marks))
    }

    @Test func drawsTheMarkAndKeysOnItsBytes() throws {
        let (root, mark) = try makeFolder()
        let configuration = try configuration(root: root, marks: ["logo": mark])
        let request = try configuration.parser.parse("/wm:logo:1:se/f:png/a.png")
        let plain = try configuration.parser.parse("/f:png/a.png")
        let identity = SourceIdentity(size: 1, mtimeNanoseconds: 1, inode: 1)

        let first = try configuration.makePipeline()
        #expect(first.stages.watermarks["logo"]?.pixels.size == PixelSize(width: 2, height: 2))
        let rendered = try first.render(request)
        #expect(rendered.size == PixelSize(width: 4, height: 4))
        let keyBefore = first.cacheKey(for: request, accepted: .sourceOnly, source: identity)
        #expect(keyBefore.text.contains("watermarks:logo="))
        let plainBefore = first.cacheKey(for: plain, accepted: .sourceOnly, source: identity)
        #expect(!plainBefore.text.contains("watermarks"))

        // Same bytes, same key; other bytes (after a new pipeline reads them), another key.
        #expect(try configuration.makePipeline().cacheKey(for: request, accepted: .sourceOnly, source: identity) == keyBefore)
        try writeMark(mark, red: 254)
        let second = try configuration.makePipeline()
        #expect(second.cacheKey(for: request, accepted: .sourceOnly, source: identity) != keyBefore)
        #expect(second.cacheKey(for: plain, accepted: .sourceOnly, source: identity) == plainBefore)
    }

    @Test func aMissingOrBrokenFileIsAConfigurationError() throws {
        let (root, mark) = try makeFolder()
        let missing = try configuration(root: root, marks: ["logo": mark + ".nope"])
        #expect(throws: ConfigError.self) { try missing.makePipeline() }
        do {
            _ = try missing.makePipeline()
        } catch {
            #expect("\(error)".contains("watermarks.logo"))
        }
        try Data("not an image".utf8).write(to: URL(fileURLWithPath: mark))
        #expect(throws: ConfigError.self) { try configuration(root: root, marks: ["logo": mark]).makePipeline() }
        #expect(throws: ConfigError.self) { try configuration(root: root, marks: ["Bad Name": mark]) }
    }

    @Test func theParserKnowsTheNames() throws {
        let (root, mark) = try makeFolder()
        let configuration = try configuration(root: root, marks: ["logo": mark])
        #expect(throws: SpecError.self) { try configuration.parser.parse("/wm:other/a.png") }
        #expect(try configuration.parser.parse("/wm:logo/a.png").operations.count == 1)
    }

    @Test func theCostPlanCountsIt() throws {
        let (root, mark) = try makeFolder()
        let configuration = try configuration(root: root, marks: ["logo": mark])
        let request = try configuration.parser.parse("/wm:logo:0.5:tile:0:0:0.5/f:png/a.png")
        let header = ImageHeader(format: .png, width: 400, height: 300)
        let plan = RequestCost.plan(request, format: .png, data: [], header: header, accepted: .sourceOnly, output: configuration.output)
        let step = try #require(plan.steps.first { $0.name.hasPrefix("watermark:") })
        #expect(step.work > 0 && step.bytes >= 3 * 400 * 300 * 2)
    }
}
