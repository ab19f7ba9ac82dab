import Foundation
import Testing
import KilnModel
@testable import KilnPipeline

/// The one render path (`ImagePipeline.render`): stills, animations and documents run the steps
/// of their `RenderKind` in `RenderStep` order; what differs between kinds is the kind's data,
/// seen here in the phases each kind's real render reports.
@Suite struct RenderKindTests {
    static let kinds: [RenderKind] = [
        .still, .animation(animate: true, frame: 0), .animation(animate: false, frame: 2),
        .document(.json, pixels: false), .document(.json, pixels: true), .document(.blurhash, pixels: true),
    ]

    @Test func everyKindRunsTheOneListInOrder() throws {
        for kind in Self.kinds {
            let positions = kind.steps.map { RenderStep.allCases.firstIndex(of: $0) ?? -1 }
            #expect(positions == positions.sorted() && Set(positions).count == positions.count, "\(kind.steps)")
            #expect(kind.steps.first == .read && kind.steps.contains(.header) && kind.steps.contains(.write), "\(kind.steps)")
            // Only what decodes is admitted; only images are checked against max_output_bytes.
            #expect(kind.steps.contains(.admit) == kind.steps.contains(.decode), "\(kind.steps)")
            #expect(kind.steps.contains(.verify) == (kind.product == .image || kind.product == .animation), "\(kind.steps)")
        }
        #expect(RenderKind.of(try SpecParser().parse("/f:json/a.png", isDecoded: true)) == .document(.json, pixels: false))
        #expect(RenderKind.of(try SpecParser().parse("/f:json/ph:1/a.png", isDecoded: true)) == .document(.json, pixels: true))
        #expect(RenderKind.of(try SpecParser().parse("/w:10/a.png", isDecoded: true)) == .still)
    }

    /// Real sources through the standard stages: the phases of each kind's timeline, and what it made.
    @Test(arguments: [
        ("w:64/corpus/pillow_hopper.jpg", ["load", "sniff", "decode", "process", "encode"], ImageFormat.jpeg, false),
        ("w:64/\(GoldenRequests.animatedGIF)", ["load", "sniff", "process", "encode"], .webp, true),
        ("w:64/frame:1/f:png/\(GoldenRequests.animatedGIF)", ["load", "sniff", "process", "encode"], .png, false),
        ("f:json/ph:1/corpus/pillow_hopper.jpg", ["load", "sniff", "header", "decode", "write"], .jpeg, false),
        ("f:thumbhash/\(GoldenRequests.animatedGIF)", ["load", "sniff", "header", "decode", "thumbhash"], .gif, false),
    ])
    func eachKindReportsItsPhases(path: String, phases: [String], format: ImageFormat, animated: Bool) throws {
        let root = try GoldenDigestTests.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let configuration = try GoldenDigestTests.makeConfiguration(root: root)
        let pipeline = try configuration.makePipeline()
        let rendered = try pipeline.render(try configuration.parser.parse("/" + path))
        #expect(rendered.timeline.phases.map(\.name) == phases)
        #expect(rendered.format == format)
        // An animated WebP names its frames in ANMF chunks; a still has none.
        let anmf = Array("ANMF".utf8)
        let hasFrames = rendered.data.count > 4 && (0...(rendered.data.count - 4)).contains { Array(rendered.data[$0..<$0 + 4]) == anmf }
        #expect(hasFrames == animated)
    }
}
