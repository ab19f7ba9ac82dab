import Testing
import KilnModel
@testable import KilnPipeline

/// The `f:auto` part of the cache key: one token per Accept class, following `http.auto_formats`.
@Suite struct AutoFormatCacheKeyTests {
    static let identity = SourceIdentity(size: 10, mtimeNanoseconds: 1_700_000_000_000_000_000, inode: 3)
    static let chromium = "image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8"

    static func key(_ accept: String?, offered: [ImageFormat] = FormatNegotiation.defaultOffered, spec: String = "/w:100/f:auto/a.jpg") throws -> CacheKey {
        let configuration = try PipelineConfiguration(ConfigValues())
        let request = try configuration.parser.parse(spec, isDecoded: true)
        return CacheKey(request: request, accepted: accepting(accept, offered), source: identity, output: configuration.output)
    }

    @Test func tokens() {
        let auto = OutputOptions(format: .auto)
        #expect(CacheKey.outputToken(auto, accepted: accepting(Self.chromium)) == "avif+webp")
        #expect(CacheKey.outputToken(auto, accepted: accepting(Self.chromium, [.webp])) == "webp")
        #expect(CacheKey.outputToken(auto, accepted: accepting("image/webp,*/*")) == "webp")
        #expect(CacheKey.outputToken(auto, accepted: accepting("*/*")) == "source")
        #expect(CacheKey.outputToken(OutputOptions(format: .format(.avif)), accepted: accepting("*/*")) == "avif")
    }

    @Test func sameClassSameKeyOtherClassOtherKey() throws {
        let chromium = try Self.key(Self.chromium)
        #expect(try Self.key("image/avif,image/webp,*/*") == chromium)                     // Firefox
        #expect(try Self.key("image/webp,*/*") != chromium)
        #expect(try Self.key("*/*") != chromium)
        #expect(try Self.key("*/*") == (try Self.key(nil)))
        // Turning AVIF off in negotiation gives AVIF clients the WebP clients' key.
        #expect(try Self.key(Self.chromium, offered: [.webp]) == (try Self.key("image/webp,*/*", offered: [.webp])))
        #expect(try Self.key(Self.chromium, offered: [.webp]).text.contains("\nwebp\n"))
        // Explicit formats do not depend on Accept.
        #expect(try Self.key(Self.chromium, spec: "/w:100/f:avif/a.jpg") == (try Self.key("*/*", spec: "/w:100/f:avif/a.jpg")))
    }
}
