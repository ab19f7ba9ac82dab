import KilnModel
import Testing
@testable import KilnHTTP

/// imgix's `s=` (`ImgixSignature`) against URLs that imgix-python 4.0.0's
/// `UrlBuilder("kiln.test", sign_key="FOO123bar")` wrote, and through `RequestGate`: a valid one is
/// admitted as signed, a tampered or foreign one is a 403, none while a token is set is refused
/// unless `adapters.allow_unsigned`, one without a token configured is a 400.
@Suite struct ImgixSignatureTests {
    static let token = "FOO123bar"
    /// (path, query) as imgix-python 4.0.0 printed them (`include_library_param` off but the last).
    static let signed: [(String, String)] = [
        ("/photos/cat.jpg", "fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a59"),
        ("/photos/a%20cat%20%C3%A9.jpg", "crop=top%2Cleft&fit=crop&h=200&w=300&s=a59e06c99e326793adceaab1db1142a5"),
        ("/photos/cat.jpg", "ixlib=python-4.0.0&mark=logo&mark-align=bottom%2Cright&w=300&s=55af4defc52e6b3971e1c8d685edb762"),
    ]

    func request(_ uri: String) -> HTTPRequest {
        HTTPRequest(fastCGIParams: ["REQUEST_URI": uri])
    }

    func gate(token: String = Self.token, keys: Bool = true, allowUnsigned: Bool = false) -> RequestGate {
        var configuration = AdapterConfiguration()
        configuration.imgix = true
        configuration.imgixToken = token
        configuration.allowUnsigned = allowUnsigned
        let signature = keys ? URLSignature(keys: [URLAdapterTests.key], allowUnsigned: false) : URLSignature()
        let allowList = AllowListConfiguration.with(widths: [640], heights: [], qualities: [], policy: .refuse)
        return RequestGate(signature: signature, allowList: allowList, adapters: configuration.adapters(),
                           parser: SpecParser(watermarks: ["logo"]))
    }

    @Test func imgixPythonsSignaturesVerify() throws {
        let adapter = ImgixAdapter(token: Self.token)
        for (path, query) in Self.signed {
            #expect(try adapter.adapt(path: path, query: query)?.signing == .verified, "\(path)?\(query)")
        }
        // The base string imgix documents: token + path + "?" + query without s.
        #expect(ImgixSignature(token: Self.token).signature(path: "/photos/cat.jpg", query: "") == "d3f327b74ad3c9bfba82c7b8e19dfe69")
        #expect(try adapter.adapt(path: "/photos/cat.jpg", query: "s=d3f327b74ad3c9bfba82c7b8e19dfe69")?.signing == .verified)
        #expect(try adapter.adapt(path: "/photos/cat.jpg", query: "s=D3F327B74AD3C9BFBA82C7B8E19DFE69")?.signing == .verified)
    }

    /// A verified URL is a signed request: no allow-list (w=300 is not in it), no unsigned refusal.
    @Test func verifiedURLsAreAdmittedAsSigned() throws {
        let admitted = try gate().admit(request("/photos/cat.jpg?fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a59"))
        #expect(admitted.provenance == .signed)
        #expect(admitted.request.canonical == (try SpecParser().parse("/w:300/el:1/-/photos/cat.jpg", isDecoded: true)).canonical)
    }

    @Test func tamperedOrForeignSignaturesAre403s() {
        let tampered = [
            "/photos/cat.jpg?fit=crop&w=301&s=6ed0c627b465984fc310c810fd7b2a59",   // a parameter changed
            "/photos/dog.jpg?fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a59",   // another path
            "/photos/cat.jpg?w=300&fit=crop&s=6ed0c627b465984fc310c810fd7b2a59",   // re-ordered: not as signed
            "/photos/cat.jpg?fit=crop&w=300&q=10&s=6ed0c627b465984fc310c810fd7b2a59", // a parameter added
            "/photos/cat.jpg?fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a5",    // too short
            "/photos/cat.jpg?fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a5z",   // not hex
            "/photos/cat.jpg?fit=crop&w=300&s=",                                    // empty
            "/photos/cat.jpg?fit=crop&w=300&blur=9999&s=6ed0c627b465984fc310c810fd7b2a59", // 403 before the 400
        ]
        for uri in tampered {
            for gate in [gate(), gate(keys: false, allowUnsigned: true)] {
                do {
                    let r = try gate.imageRequest(for: request(uri))
                    Issue.record("\(uri) admitted as \(r.canonical)")
                } catch {
                    let mapped = ErrorMapping.map(error)
                    #expect(mapped.status == 403, "\(uri): \(mapped.message)")
                }
            }
        }
        // Another token's signature.
        #expect(throws: AdapterError.badSignature("imgix")) {
            try ImgixAdapter(token: "another").adapt(path: "/photos/cat.jpg", query: "fit=crop&w=300&s=6ed0c627b465984fc310c810fd7b2a59")
        }
    }

    @Test func unsignedWhileATokenIsSetIsRefusedUnlessAllowed() throws {
        #expect(try ImgixAdapter(token: Self.token).adapt(path: "/cat.jpg", query: "w=640")?.signing == .unsignedWhileKeyed)
        #expect(try ImgixAdapter().adapt(path: "/cat.jpg", query: "w=640")?.signing == .unsigned)
        for gate in [gate(), gate(keys: false)] {
            do {
                _ = try gate.imageRequest(for: request("/cat.jpg?w=640"))
                Issue.record("accepted")
            } catch {
                let mapped = ErrorMapping.map(error)
                #expect(mapped.status == 403 && mapped.message.contains("adapters.allow_unsigned"), "\(mapped.message)")
            }
        }
        // Allowed: an unsigned URL, which meets the allow-lists.
        let open = gate(allowUnsigned: true)
        #expect(try open.admit(request("/cat.jpg?w=640")).provenance == .unsigned)
        #expect(throws: SpecError.self) { try open.imageRequest(for: self.request("/cat.jpg?w=641")) }
    }

    @Test func aSignatureWithoutATokenIsA400() {
        do {
            _ = try gate(token: "", keys: false, allowUnsigned: true).imageRequest(for: request("/cat.jpg?w=640&s=6ed0c627b465984fc310c810fd7b2a59"))
            Issue.record("accepted")
        } catch {
            let mapped = ErrorMapping.map(error)
            #expect(mapped.status == 400 && mapped.message.contains("no imgix token is configured"), "\(mapped.message)")
        }
    }

    @Test func theSignatureIsSplitFromTheQueryAsWritten() throws {
        let (s, rest) = try ImgixSignature.split("b=2&a=1&s=abc", adapter: "imgix")
        #expect(s == "abc" && rest == "b=2&a=1")
        let (none, all) = try ImgixSignature.split("w=1&ss=2", adapter: "imgix")
        #expect(none == nil && all == "w=1&ss=2")
        let (encoded, _) = try ImgixSignature.split("w=1&%73=ff", adapter: "imgix")
        #expect(encoded == "ff")
    }
}
