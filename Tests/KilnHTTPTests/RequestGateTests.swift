import KilnPipeline
import KilnModel
import Testing
@testable import KilnHTTP

@Suite struct RequestGateTests {
    static let key = SigningKey(key: Array(repeating: 0x42, count: 32), salt: Array(repeating: 0x17, count: 32))
    let parser = SpecParser(presets: ["small": "rs:20:20:fill"])

    func request(_ uri: String, document: String? = nil, params extra: [String: String] = [:]) -> HTTPRequest {
        var params = ["REQUEST_URI": uri, "DOCUMENT_URI": document ?? uri.split(separator: "?", maxSplits: 1).first.map(String.init) ?? uri]
        for (k, v) in extra { params[k] = v }
        return HTTPRequest(fastCGIParams: params)
    }

    @Test func onlyTheExactTrustedParamCounts() {
        #expect(request("/a.jpg", params: ["KILN_TRUSTED": "1"]).isTrusted)
        #expect(!request("/a.jpg", params: ["HTTP_KILN_TRUSTED": "1"]).isTrusted)
        #expect(!request("/a.jpg", params: ["KILN_TRUSTED": "yes"]).isTrusted)
        #expect(!request("/a.jpg", params: ["kiln_trusted": "1"]).isTrusted)
        #expect(request("/a%20b.jpg?x=1").rawPath == "/a%20b.jpg")
    }

    @Test func signedPathsParseTheRawRemainderNotDocumentURI() throws {
        let gate = RequestGate(signature: URLSignature(keys: [Self.key], allowUnsigned: false), parser: parser)
        let signed = try #require(gate.signature.sign("/w:10/sub/c%61t.jpg"))
        // nginx's DOCUMENT_URI (decoded, maybe rewritten) is not what the signature covers: ignored.
        let r = try gate.imageRequest(for: request(signed, document: "/w:5000/other.jpg"))
        #expect(r.sourcePath == "sub/cat.jpg")
        #expect(r.operations == [.resize(ResizeOptions(width: 10, height: 0, mode: .fit))])
        #expect(throws: SignatureError.self) { try gate.imageRequest(for: request("/w:10/a.jpg")) }
        #expect(throws: SignatureError.unsignedRefused) { try gate.imageRequest(for: request("/unsafe/w:10/a.jpg")) }
        #expect(throws: SignatureError.self) { try gate.imageRequest(for: request("/w:10/a.jpg", params: ["HTTP_KILN_TRUSTED": "1"])) }
    }

    @Test func trustedRequestsParseDocumentURIWithoutSignature() throws {
        let gate = RequestGate(signature: URLSignature(keys: [Self.key], allowUnsigned: false),
                               policy: OptionPolicy(presetsOnly: true), parser: parser)
        let r = try gate.imageRequest(for: request("/thumb/30x20/a.jpg", document: "/rs:30:20:fill/-/a.jpg", params: ["KILN_TRUSTED": "1"]))
        #expect(r.sourcePath == "a.jpg")
        #expect(r.operations == [.resize(ResizeOptions(width: 30, height: 20, mode: .fill))])
    }

    @Test func withoutKeysTodaysPathsAndUnsafeWork() throws {
        let gate = RequestGate(parser: parser)
        #expect(try gate.imageRequest(for: request("/w:10/a.jpg")).sourcePath == "a.jpg")
        #expect(try gate.imageRequest(for: request("/unsafe/w:10/a.jpg")).canonical == "rs:10:0:fit/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/-/unsafe/a.jpg")).sourcePath == "unsafe/a.jpg")
        let closed = RequestGate(signature: URLSignature(allowUnsigned: false), parser: parser)
        #expect(throws: SignatureError.unsignedRefused) { try closed.imageRequest(for: request("/w:10/a.jpg")) }
        #expect(try closed.imageRequest(for: request("/x", document: "/w:10/a.jpg", params: ["KILN_TRUSTED": "1"])).sourcePath == "a.jpg")
    }

    @Test func policyAppliesToUntrustedRequests() throws {
        let gate = RequestGate(policy: OptionPolicy(presetsOnly: true, presetsOnlyAllow: ["dpr"]), parser: parser)
        #expect(try gate.imageRequest(for: request("/pr:small/dpr:2/a.jpg")).operations
            == [.resize(ResizeOptions(width: 40, height: 40, mode: .fill))])
        #expect(throws: PolicyError.self) { try gate.imageRequest(for: request("/rs:20:20:fill/a.jpg")) }
        #expect(throws: PolicyError.self) { try gate.imageRequest(for: request("/unsafe/rs:20:20:fill/a.jpg")) }
    }

    @Test func expiryIsOutOfTheCanonicalForm() throws {
        let a = try parser.parse("/exp:1700000000/w:10/a.jpg")
        #expect(a.expires == 1_700_000_000)
        #expect(a.canonical == (try parser.parse("/w:10/a.jpg")).canonical)
        #expect(throws: SpecError.self) { try parser.parse("/exp:1/exp:2/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/exp:-5/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/exp:0x10/a.jpg") }
    }

    @Test func failuresMapTo403And410() {
        #expect(ErrorMapping.map(SignatureError.mismatch).status == 403)
        #expect(ErrorMapping.map(PolicyError.notAllowed(segment: "bl:2", reason: "x")).status == 403)
        #expect(ErrorMapping.map(RequestRefusal.expired("gone")).status == 410)
        #expect(ErrorMapping.map(PipelineFailure(.cancelled, "gone")).status == 499)
        #expect(HTTPResponse.reason(410) == "Gone")
    }

    @Test func cacheControlIsCappedAtTheExpiry() {
        #expect(CacheControlPolicy.capping("public, max-age=31536000", maxAge: 600) == "public, max-age=600")
        #expect(CacheControlPolicy.capping("public, max-age=60, s-maxage=99999", maxAge: 600) == "public, max-age=60, s-maxage=600")
        #expect(CacheControlPolicy.capping("no-store", maxAge: 5) == "no-store")
        #expect(CacheControlPolicy.capping("max-age=60, stale-while-revalidate=86400, stale-if-error=604800", maxAge: 30)
            == "max-age=30, stale-while-revalidate=30, stale-if-error=30")
    }

    @Test func provenanceOfEachWayIn() throws {
        let gate = RequestGate(signature: URLSignature(keys: [Self.key], allowUnsigned: true), parser: parser)
        let signed = try #require(gate.signature.sign("/w:10/a.jpg"))
        #expect(try gate.admit(request(signed)).provenance == .signed)
        #expect(try gate.admit(request("/unsafe/w:10/a.jpg")).provenance == .unsigned)
        #expect(try gate.admit(request("/thumb/1x1/a.jpg", document: "/w:10/-/a.jpg", params: ["KILN_TRUSTED": "1"])).provenance == .trusted)
        let open = RequestGate(parser: parser)
        #expect(try open.admit(request("/w:10/a.jpg")).provenance == .unsigned)
    }

    @Test func immutableOnlyWhereTheURLCannotChange() throws {
        let plain = try parser.parse("/w:10/a.jpg")
        let versioned = try parser.parse("/cb:v2/w:10/a.jpg")
        func value(_ mode: Immutability, _ r: ImageRequest, _ p: RequestGate.Provenance, cc: String = "public, max-age=31536000") -> String? {
            CacheControlPolicy(cacheControl: cc, immutable: mode).headers(for: r, provenance: p, now: 0)
                .first { $0.0 == "Cache-Control" }?.1
        }
        #expect(value(.versioned, versioned, .unsigned) == "public, max-age=31536000, immutable")
        #expect(value(.versioned, plain, .signed) == "public, max-age=31536000")
        #expect(value(.signed, plain, .signed) == "public, max-age=31536000, immutable")
        #expect(value(.signed, plain, .trusted) == "public, max-age=31536000")
        #expect(value(.off, versioned, .signed) == "public, max-age=31536000")
        #expect(value(.versioned, versioned, .unsigned, cc: "no-store") == "no-store")
        #expect(value(.versioned, versioned, .unsigned, cc: "public, immutable, max-age=9") == "public, immutable, max-age=9")
        let cdn = CacheControlPolicy(cacheControl: "max-age=60", cdnCacheControl: "max-age=31536000", immutable: .off)
        var expiring = plain
        expiring.expires = 1_000
        let h = cdn.headers(for: expiring, provenance: .signed, now: 900)
        #expect(h.first { $0.0 == "CDN-Cache-Control" }?.1 == "max-age=100")
        #expect(h.first { $0.0 == "Cache-Control" }?.1 == "max-age=60")
        #expect(CacheControlPolicy(cacheControl: "x").headers(for: plain, provenance: .signed, now: 0).count == 1)
    }

    @Test func cachebusterIsPartOfTheVariant() throws {
        let a = try parser.parse("/cb:v2/w:10/a.jpg")
        #expect(a.version == "v2")
        #expect(a.canonical == "rs:10:0:fit/cb:v2/-/a.jpg")
        #expect(try parser.parse("/w:10/cachebuster:v2/a.jpg").canonical == a.canonical)
        #expect(try parser.parse("/w:10/a.jpg").canonical == "rs:10:0:fit/-/a.jpg")
        #expect(throws: SpecError.self) { try parser.parse("/cb:v1/cb:v2/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/cb:a%2Fb/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/cb:" + String(repeating: "x", count: 65) + "/a.jpg") }
        // An allow-list of operations lets it through (it renders nothing); presets-only does not.
        #expect(throws: Never.self) { try parser.check(OptionPolicy(allowedOperations: ["resize"]), path: "/cb:1/w:10/a.jpg", isDecoded: false) }
        #expect(throws: PolicyError.self) { try parser.check(OptionPolicy(presetsOnly: true), path: "/cb:1/pr:small/a.jpg", isDecoded: false) }
    }
}
