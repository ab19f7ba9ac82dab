import Foundation
import KilnModel
import Testing
@testable import KilnHTTP

/// Replays Tests/fuzz-regressions/FuzzImgproxyAdapter/ (inputs of Fuzz/Sources/FuzzImgproxyAdapter)
/// with the harness's properties: signed with the key, a claimed URL is verified and the same URL
/// with one signature character changed is a bad signature (the first finding: a combining mark
/// after a `/` made the signed part one Character short); the translation's native path parses
/// or fails with a `SpecError`, and its canonical form re-parses to itself.
@Suite struct ImgproxyAdapterRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz-regressions/FuzzImgproxyAdapter")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    static let key = SigningKey(key: Array("fuzz-key".utf8), salt: Array("fuzz-salt".utf8))
    static let adapter = ImgproxyAdapter(signature: URLSignature(keys: [key], size: 32), origins: URLAdapterTests.origins,
                                         watermark: "logo")

    @Test func theFolderHasInputs() {
        #expect(!Self.names.isEmpty)
    }

    @Test(arguments: names)
    func replays(_ name: String) throws {
        let text = String(decoding: try Data(contentsOf: Self.folder.appendingPathComponent(name)), as: UTF8.self)
        let path = AdaptedSource.isRooted(text) ? text : "/" + text
        let signature = URLSignature.signature(of: path, key: Self.key)
        let adapted: AdaptedURL?
        do {
            adapted = try Self.adapter.adapt(path: "/" + signature + path, query: nil)
        } catch {
            #expect(!error.isBadSignature, "\(name): \(error.message)")
            return
        }
        guard let adapted else { return }
        #expect(adapted.signing == .verified, "\(name)")
        var tampered = Array(signature)
        tampered[5] = tampered[5] == "A" ? "B" : "A"
        #expect(throws: AdapterError.badSignature("imgproxy")) { try Self.adapter.adapt(path: "/" + String(tampered) + path, query: nil) }
        let parser = SpecParser(watermarks: ["logo"])
        guard let parsed = try? parser.parse(adapted.nativePath, isDecoded: true) else { return }
        #expect(try parser.parse("/" + parsed.canonical, isDecoded: true).canonical == parsed.canonical, "\(name)")
    }
}
