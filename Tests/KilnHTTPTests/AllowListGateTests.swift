import KilnModel
import Testing
@testable import KilnHTTP

/// `limits.allowed_*` through `RequestGate`: unsigned requests are refused or snapped (after
/// `dpr`), signed and trusted ones pass untouched.
@Suite struct AllowListGateTests {
    static let key = SigningKey(key: Array(repeating: 0x42, count: 32), salt: Array(repeating: 0x17, count: 32))
    let parser = SpecParser(presets: ["small": "rs:20:20:fill"])

    func request(_ uri: String, trusted: Bool = false) -> HTTPRequest {
        var params = ["REQUEST_URI": uri, "DOCUMENT_URI": uri]
        if trusted { params["KILN_TRUSTED"] = "1" }
        return HTTPRequest(fastCGIParams: params)
    }

    func list(_ policy: VariantAllowList.Policy) -> VariantAllowList {
        AllowListConfiguration.with(widths: [640, 320, 1280], heights: [200], qualities: [50, 80], policy: policy)
    }

    @Test func refuseNamesTheKeyAndTheValues() throws {
        let gate = RequestGate(allowList: list(.refuse), parser: parser)
        #expect(try gate.imageRequest(for: request("/w:320/q:80/a.jpg")).canonical == "rs:320:0:fit/q:80/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/w:160/dpr:2/a.jpg")).canonical == "rs:320:0:fit/-/a.jpg")
        #expect(throws: SpecError.invalidOption(segment: "width 321",
                                                reason: "not in limits.allowed_widths (320, 640, 1280); only signed URLs may ask for other values")) {
            try gate.imageRequest(for: request("/w:321/a.jpg"))
        }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: request("/w:320/dpr:1.5/a.jpg")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: request("/rs:320:100/a.jpg")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: request("/q:81/a.jpg")) }
        // A preset's sizes are checked too: list them.
        #expect(throws: SpecError.self) { try gate.imageRequest(for: request("/pr:small/a.jpg")) }
        // No resize and no q: nothing to check.
        #expect(try gate.imageRequest(for: request("/bl:2/a.jpg")).canonical == "blur:2/-/a.jpg")
    }

    @Test func snapGoesUpThenToTheLargest() throws {
        let gate = RequestGate(allowList: list(.snap), parser: parser)
        #expect(try gate.imageRequest(for: request("/w:321/a.jpg")).canonical == "rs:640:0:fit/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/w:1/a.jpg")).canonical == "rs:320:0:fit/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/w:5000/a.jpg")).canonical == "rs:1280:0:fit/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/w:400/dpr:2/a.jpg")).canonical == "rs:1280:0:fit/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/rs:300:150:fill/q:60/a.jpg")).canonical == "rs:320:200:fill/q:80/-/a.jpg")
        #expect(try gate.imageRequest(for: request("/q:99/a.jpg")).canonical == "q:80/-/a.jpg")
    }

    @Test func signedAndTrustedAreNotRestricted() throws {
        let gate = RequestGate(signature: URLSignature(keys: [Self.key], allowUnsigned: true), allowList: list(.refuse), parser: parser)
        let signed = try #require(gate.signature.sign("/w:321/q:99/a.jpg"))
        #expect(try gate.admit(request(signed)).request.canonical == "rs:321:0:fit/q:99/-/a.jpg")
        #expect(try gate.admit(request("/w:321/a.jpg", trusted: true)).request.canonical == "rs:321:0:fit/-/a.jpg")
        #expect(throws: SpecError.self) { try gate.admit(request("/unsafe/w:321/a.jpg")) }
        let snapping = RequestGate(signature: gate.signature, allowList: list(.snap), parser: parser)
        #expect(try snapping.admit(request(signed)).request.canonical == "rs:321:0:fit/q:99/-/a.jpg")
        #expect(try snapping.admit(request("/unsafe/w:321/a.jpg")).request.canonical == "rs:640:0:fit/-/a.jpg")
    }

    @Test func listsParse() {
        #expect(VariantAllowList.parseList("320, 640,,1280", in: 1...65_535) == [320, 640, 1280])
        #expect(VariantAllowList.parseList("", in: 1...100) == [])
        #expect(VariantAllowList.parseList("0", in: 1...100) == nil)
        #expect(VariantAllowList.parseList("101", in: 1...100) == nil)
        #expect(VariantAllowList.parseList("5x", in: 1...100) == nil)
        #expect(VariantAllowList.parseList("+5", in: 1...100) == nil)
    }
}

extension AllowListConfiguration {
    static func with(widths: [Int], heights: [Int], qualities: [Int], policy: VariantAllowList.Policy) -> VariantAllowList {
        var c = AllowListConfiguration()
        c.allowedWidths = widths
        c.allowedHeights = heights
        c.allowedQualities = qualities
        c.allowedPolicy = policy
        return c.allowList
    }
}
