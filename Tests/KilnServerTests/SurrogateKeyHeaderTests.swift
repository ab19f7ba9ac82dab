import Testing
import KilnModel
@testable import KilnHTTP
@testable import KilnServer

/// Issue 28 through the real image handler: every image answer (a render, a cache hit, a 304,
/// a fallback, a document) carries the requested source's surrogate keys and its presets';
/// error answers carry none; `[http]` turns each header off.
@Suite struct SurrogateKeyHeaderTests {
    @Test func everyImageAnswerCarriesTheSourcesTags() throws {
        let folder = try ImageFolder("surrogate")
        defer { folder.remove() }
        var values = folder.values
        values.merge(["presets.tiny": "rs:4:4:fill", "fallback.not_found": folder.root + "/b.png"], origin: "test")
        let handler = try HandlerFactory().makeImageHandler(try KilnConfiguration(values), quietLogger)
        let a = SourceTag(sourcePath: "a.png").headerValue

        let render = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        #expect(render.status == 200 && render.header("X-Cache") == "MISS")
        #expect(render.header("Surrogate-Key") == a && render.header("xkey") == a && render.header("Cache-Tag") == a)
        let hit = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        #expect(hit.header("X-Cache") == "HIT-MEMORY" && hit.header("xkey") == a)
        let notModified = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png",
                                                     headers: ["if-none-match": try #require(render.header("ETag"))]))
        #expect(notModified.status == 304 && notModified.header("Surrogate-Key") == a && notModified.header("Cache-Tag") == a)

        let preset = handler.handle(HTTPRequest(method: "GET", uri: "/pr:tiny/a.png"))
        #expect(preset.status == 200 && preset.header("xkey") == a + " kiln-preset-tiny")
        #expect(preset.header("Cache-Tag") == a + ",kiln-preset-tiny")
        let document = handler.handle(HTTPRequest(method: "GET", uri: "/f:json/a.png"))
        #expect(document.status == 200 && document.header("xkey") == a)

        // A fallback answer is filed under the source that was asked for, not the fallback file.
        let missing = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/gone.png"))
        #expect(missing.status == 404 && missing.header("Kiln-Fallback") == "not-found")
        #expect(missing.header("xkey") == SourceTag(sourcePath: "gone.png").headerValue)
        #expect(missing.header("xkey") != SourceTag(sourcePath: "b.png").headerValue)

        // Errors are not cached (no-store) and carry no tags.
        let bad = handler.handle(HTTPRequest(method: "GET", uri: "/w:abc/a.png"))
        #expect(bad.status == 400 && bad.header("xkey") == nil && bad.header("Surrogate-Key") == nil)
    }

    @Test func eachHeaderTurnsOff() throws {
        let folder = try ImageFolder("surrogate-off")
        defer { folder.remove() }
        var values = folder.values
        values.merge(["http.surrogate_key": "false", "http.cache_tag": "false"], origin: "test")
        let handler = try HandlerFactory().makeImageHandler(try KilnConfiguration(values), quietLogger)
        let r = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        #expect(r.status == 200 && r.header("xkey") == SourceTag(sourcePath: "a.png").headerValue)
        #expect(r.header("Surrogate-Key") == nil && r.header("Cache-Tag") == nil)
        values.merge(["http.xkey": "false"], origin: "test")
        let none = try HandlerFactory().makeImageHandler(try KilnConfiguration(values), quietLogger)
        #expect(none.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png")).header("xkey") == nil)
    }
}
