import Foundation
import KilnModel
import Testing
@testable import KilnHTTP

/// Replays Tests/fuzz-regressions/FuzzThumborAdapter/ (inputs of the thumbor adapter harness,
/// Fuzz/Sources/FuzzThumborAdapter) through the same two adapters: each ends in a translation
/// whose native path parses (or fails with a `SpecError`), or an `AdapterError`, never a trap.
@Suite struct ThumborAdapterRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz-regressions/FuzzThumborAdapter")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    static let keyed = ThumborAdapter(key: "MY_SECURE_KEY", origins: URLAdapterTests.origins)
    static let open = ThumborAdapter(origins: URLAdapterTests.origins)

    @Test func theFolderHasInputs() {
        #expect(!Self.names.isEmpty)
    }

    @Test(arguments: names)
    func replays(_ name: String) throws {
        let text = String(decoding: try Data(contentsOf: Self.folder.appendingPathComponent(name)), as: UTF8.self)
        let path = text.hasPrefix("/") ? text : "/" + text
        for (adapter, url) in [(Self.keyed, path), (Self.open, "/unsafe" + path)] {
            do {
                guard let adapted = try adapter.adapt(path: url, query: nil) else { continue }
                #expect(!adapted.options.contains { $0.contains("/") || $0 == "-" || $0.isEmpty }, "\(name)")
                do {
                    let parsed = try SpecParser().parse(adapted.nativePath, isDecoded: true)
                    #expect(try SpecParser().parse("/" + parsed.canonical, isDecoded: true).canonical == parsed.canonical)
                } catch {
                    #expect(!"\(error)".isEmpty)
                }
            } catch {
                #expect(!"\(error)".isEmpty, "\(name)")
            }
        }
    }
}
