import Foundation
import KilnModel
@testable import KilnHTTP
import Testing

/// Replays Tests/fuzz-regressions/FuzzURLAdapters/ (inputs of the adapters' harness,
/// Fuzz/Sources/FuzzURLAdapters, whose configuration this repeats: every adapter on, an imgix
/// token, one origin) with the harness's properties: a translation parses or fails with the
/// parser's own error, an `onerror=redirect` target is one printable header value.
@Suite struct URLAdapterRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz-regressions/FuzzURLAdapters")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    static let adapters: URLAdapters = {
        var c = AdapterConfiguration()
        c.nextjs = true
        c.cloudflare = true
        c.imgix = true
        c.imgixToken = "fuzz-token"
        return c.adapters(origins: [AdapterOrigin(name: "photos", baseURL: "https://img.example.com/originals/")])
    }()

    @Test func theFolderHasInputs() {
        #expect(!Self.names.isEmpty)
    }

    @Test(arguments: names)
    func replays(_ name: String) throws {
        let text = String(decoding: try Data(contentsOf: Self.folder.appendingPathComponent(name)), as: UTF8.self)
        let request = HTTPRequest(method: "GET", uri: text.hasPrefix("/") ? text : "/" + text)
        guard let adapted = try? Self.adapters.adapt(request) else { return }
        #expect(!adapted.options.contains { $0.contains("/") || $0 == "-" })
        if let location = adapted.onErrorRedirect {
            #expect(location.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "\(location)")
        }
        // The parser's typed error (a limit) or a request: never a trap.
        _ = try? SpecParser().parse(adapted.nativePath, isDecoded: true)
    }
}
