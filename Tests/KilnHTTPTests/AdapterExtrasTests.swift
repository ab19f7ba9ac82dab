import Logging
import KilnModel
import KilnPipeline
import Testing
@testable import KilnHTTP

/// The translations that need more than a twin (watermarks need a configured name, `w:auto` an
/// HTTP request) and Cloudflare's `onerror=redirect`, down to the handler's `302`.
@Suite struct AdapterExtrasTests {
    let parser = SpecParser(watermarks: ["logo"])

    func options(_ path: String, _ query: String) throws -> [String] {
        try #require(try ImgixAdapter().adapt(path: path, query: query)).options
    }

    @Test func imgixMarksAreConfiguredWatermarks() throws {
        #expect(try options("/cat.jpg", "mark=logo") == ["wm:logo:1:se:5:5:0"])
        #expect(try options("/cat.jpg", "mark=logo&mark-alpha=60&mark-align=top%2Cleft&mark-pad=16&mark-w=0.2")
                == ["wm:logo:0.6:nw:16:16:0.2"])
        #expect(try options("/cat.jpg", "mark=logo&mark-align=bottom&mark-pad=8") == ["wm:logo:1:south:0:8:0"])
        #expect(try options("/cat.jpg", "mark=logo&mark-align=middle,center") == ["wm:logo:1:center:0:0:0"])
        #expect(try options("/cat.jpg", "mark=logo&mark-align=right&mark-alpha=0") == ["wm:logo:0:east:5:0:0"])
        // They parse: the twin of a native watermark.
        let adapted = try #require(try ImgixAdapter().adapt(path: "/cat.jpg", query: "w=300&mark=logo&mark-alpha=50&mark-w=0.25"))
        let a = try parser.parse(adapted.nativePath, isDecoded: true)
        let n = try parser.parse("/w:300/el:1/wm:logo:0.5:se:5:5:0.25/cat.jpg", isDecoded: true)
        #expect(a.canonical == n.canonical)
        // A name the operator did not configure is the parser's 400.
        let unknown = try #require(try ImgixAdapter().adapt(path: "/cat.jpg", query: "mark=other"))
        #expect(throws: SpecError.self) { try self.parser.parse(unknown.nativePath, isDecoded: true) }
    }

    @Test func imgixClientHintsWidthIsAutoWithoutW() throws {
        #expect(try options("/cat.jpg", "ch=Width") == ["w:auto", "el:1", "ch:1"])
        #expect(try options("/cat.jpg", "ch=Width%2CDPR&fit=max") == ["w:auto", "ch:1"])
        #expect(try options("/cat.jpg", "ch=Width&h=200&fit=crop") == ["rs:0:200:fill", "w:auto", "el:1", "ch:1"])
        #expect(try options("/cat.jpg", "ch=width,dpr&w=300") == ["w:300", "el:1", "ch:1"])
        // Resolved from the request's hints: the native w:auto's entry.
        struct Hints: DeviceHintResolving {
            func resolve(_ use: DeviceHintUse) -> DeviceAnswer { DeviceAnswer(width: 640) }
        }
        let adapted = try #require(try ImgixAdapter().adapt(path: "/cat.jpg", query: "ch=Width&h=200&fit=crop"))
        let a = try SpecParser().parse(adapted.nativePath, isDecoded: true, hints: Hints())
        let n = try SpecParser().parse("/rs:640:200:fill/el:1/ch:1/cat.jpg", isDecoded: true, hints: Hints())
        #expect(a.operations == n.operations)
    }

    @Test func cloudflareOnErrorCarriesTheSourceAsWritten() throws {
        let adapter = CloudflareAdapter(origins: URLAdapterTests.origins)
        let local = try #require(try adapter.adapt(path: "/cdn-cgi/image/width=300,onerror=redirect/photos/a%20cat.jpg", query: nil))
        #expect(local.onErrorRedirect == "/photos/a%20cat.jpg")
        let remote = try #require(try adapter.adapt(path: "/cdn-cgi/image/onerror=redirect/https://img.example.com/originals/cat.jpg", query: nil))
        #expect(remote.onErrorRedirect == "https://img.example.com/originals/cat.jpg" && remote.sourcePath == "photos/cat.jpg")
        #expect(try adapter.adapt(path: "/cdn-cgi/image/width=300/cat.jpg", query: nil)?.onErrorRedirect == nil)
        #expect(CloudflareAdapter.location("/a\u{7F}b é") == "/a%7Fb%20%C3%A9")
    }

    /// A pipeline that fails every render, and answers a substitute's (a fallback) when one is given.
    final class Failing: ImageProviding {
        var observer: (any RenderObserving)?
        var output = OutputConfiguration()
        var failure = PipelineFailure(.notFound, "no such source")
        var renders = 0

        func requestBegan() {}
        func image(for request: ImageRequest, accepted: FormatNegotiation) throws(PipelineFailure) -> PipelineResult {
            renders += 1
            throw failure
        }
        func image(for request: ImageRequest, accepted: FormatNegotiation, substitute: SubstituteImage) throws(PipelineFailure) -> PipelineResult {
            PipelineResult(image: CachedImage(data: Array("fallback".utf8), format: .png, digest: String(repeating: "cd", count: 16),
                                              sourceModified: 1_700_000_000, sourcePath: substitute.path),
                           outcome: .miss, timeline: Timeline())
        }
        func afterResponse() -> SweepStats? { nil }
        func finish(timeout: Double) -> SweepStats? { nil }
    }

    func handler(_ pipeline: Failing, fallbacks: FallbackImages = FallbackImages()) -> ImageHandler {
        var configuration = AdapterConfiguration()
        configuration.cloudflare = true
        let gate = RequestGate(adapters: configuration.adapters(origins: URLAdapterTests.origins), parser: SpecParser())
        return ImageHandler(pipeline: pipeline, gate: gate, http: HTTPConfiguration(), fallbacks: fallbacks, logger: Logger(label: "test"))
    }

    @Test func aFailedRenderRedirectsToTheSource() {
        let pipeline = Failing()
        let handler = handler(pipeline)
        for (uri, location) in [("/cdn-cgi/image/width=300,onerror=redirect/photos/cat.jpg", "/photos/cat.jpg"),
                                ("/cdn-cgi/image/onerror=redirect/https://img.example.com/originals/cat.jpg",
                                 "https://img.example.com/originals/cat.jpg")] {
            for kind in [PipelineFailure.Kind.notFound, .corrupt, .tooLarge] {
                pipeline.failure = PipelineFailure(kind, "failed")
                let r = handler.handle(HTTPRequest(fastCGIParams: ["REQUEST_URI": uri]))
                #expect(r.status == 302 && r.header("Location") == location, "\(uri) \(kind)")
                #expect(r.header("Cache-Control") == "no-store" && r.header("ETag") == nil)
                #expect(r.reason?.contains("onerror=redirect") == true)
            }
        }
        // Without onerror: the error itself.
        pipeline.failure = PipelineFailure(.corrupt, "damaged")
        #expect(handler.handle(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/cdn-cgi/image/width=300/photos/cat.jpg"])).status == 422)
        // A bad Cloudflare URL is its 400, never a redirect, and renders nothing.
        let before = pipeline.renders
        let bad = handler.handle(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/cdn-cgi/image/width=-1,onerror=redirect/photos/cat.jpg"]))
        #expect(bad.status == 400 && bad.header("Location") == nil && pipeline.renders == before)
    }

    @Test func aFallbackImageWinsOverTheRedirect() {
        let pipeline = Failing()
        let handler = handler(pipeline, fallbacks: FallbackImages(notFound: SubstituteImage(name: "not-found", path: "/f/p.png")))
        let r = handler.handle(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/cdn-cgi/image/width=300,onerror=redirect/photos/cat.jpg"]))
        #expect(r.status == 404 && r.header("Location") == nil && r.body == Array("fallback".utf8))
        #expect(r.header("Kiln-Fallback") == "not-found")
    }
}
