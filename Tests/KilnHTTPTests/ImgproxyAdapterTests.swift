import KilnModel
import Testing
@testable import KilnHTTP

/// imgproxy's URLs (`adapters.imgproxy`) through `RequestGate`: each is the same request as its
/// native twin; its signature is checked with imgproxy's keys (a tampered one is a 403); what
/// Kiln cannot do is a 400 naming it; native URLs stay native.
@Suite struct ImgproxyAdapterTests {
    static let key = SigningKey(key: Array("secret-key".utf8), salt: Array("hello-salt".utf8))
    let parser = SpecParser(watermarks: ["logo"])

    func gate(keys: [SigningKey] = [], size: Int = 32, allowUnsigned: Bool = false) -> RequestGate {
        var configuration = AdapterConfiguration()
        configuration.imgproxy = true
        configuration.imgproxyKeys = keys.map(\.key)
        configuration.imgproxySalts = keys.map(\.salt)
        configuration.imgproxySignatureSize = size
        configuration.imgproxyWatermark = "logo"
        configuration.allowUnsigned = allowUnsigned
        return RequestGate(adapters: configuration.adapters(origins: URLAdapterTests.origins), parser: parser)
    }

    func request(_ uri: String) -> HTTPRequest { HTTPRequest(fastCGIParams: ["REQUEST_URI": uri]) }

    /// base64url without padding, as imgproxy's clients encode source URLs.
    static func b64(_ s: String) -> String { Base64URL.encode(Array(s.utf8)) }

    /// (imgproxy URL, native twin).
    static let twins: [(String, String)] = [
        ("/insecure/rs:fill:300:200/plain/local:///photos/cat.jpg", "/rs:300:200:fill/photos/cat.jpg"),
        ("/insecure/rs:fill:300:200:1/g:sm/plain/local:///cat.jpg@webp", "/rs:300:200:fill/el:1/g:smart/f:webp/cat.jpg"),
        ("/_/resize:fit:300:0/plain/cat.jpg@png", "/rs:300:0:fit/f:png/cat.jpg"),
        ("/insecure/rs:auto:300:200:0/g:ce/\(b64("local:///cat.jpg")).jpg", "/rs:300:200:auto/g:center/f:jpeg/cat.jpg"),
        ("/insecure/w:300/h:200/rt:force/\(b64("local:///a/b%20c.jpg"))", "/rs:300:200:force/a/b%20c.jpg"),
        ("/insecure/s:400:300/el:1/plain/https://img.example.com/originals/2026/cat.jpg", "/rs:400:300:fit/el:1/photos/2026/cat.jpg"),
        ("/insecure/w:300/\(b64("https://img.example.com/originals/cat.jpg"))", "/rs:300:0:fit/photos/cat.jpg"),
        ("/insecure/rs:fill:300:300/g:fp:0.25:0.75/plain/cat.jpg", "/rs:300:300:fill/g:fp:0.25:0.75/cat.jpg"),
        ("/insecure/rs:fill:300:300/g:noea/plain/cat.jpg", "/rs:300:300:fill/g:ne/cat.jpg"),
        ("/insecure/c:600:400:sowe/rs:fit:300:300/plain/cat.jpg", "/crop:600:400:sw/rs:300:300:fit/cat.jpg"),
        ("/insecure/t:10:ffffff:1:0/w:300/plain/cat.jpg", "/t:10:ffffff:1:0/rs:300:0:fit/cat.jpg"),
        ("/insecure/trim:5/plain/cat.jpg", "/t:5/cat.jpg"),
        ("/insecure/pd:10/plain/cat.jpg", "/pad:10:10:10:10/cat.jpg"),
        ("/insecure/rs:fit:300:200:0:1/plain/cat.jpg", "/rs:300:200:fit/extend:300:200/cat.jpg"),
        ("/insecure/ex:1:nowe/rs:fill:300:200/bg:fff/plain/cat.jpg", "/rs:300:200:fill/extend:300:200:nw/bg:ffffff/cat.jpg"),
        ("/insecure/ex:1/plain/cat.jpg", "/cat.jpg"),
        ("/insecure/pd:10:20/bg:255:136:0/plain/cat.jpg", "/pad:10:20:10:20/bg:ff8800/cat.jpg"),
        ("/insecure/padding:1:2:3/bg:f80/plain/cat.jpg", "/pad:1:2:3:2/bg:ff8800/cat.jpg"),
        ("/insecure/rot:90/fl:1:0/plain/cat.jpg", "/rot:90/flip:h/cat.jpg"),
        ("/insecure/q:70/fq:webp:60:avif:50/mb:30000/plain/cat.jpg@webp", "/q:70/fq:webp:60:avif:50/mb:30000/f:webp/cat.jpg"),
        ("/insecure/bl:2/sh:0.5/plain/cat.jpg", "/bl:2/sh:0.5/cat.jpg"),
        ("/insecure/bl:0/q:0/mb:0/plain/cat.jpg", "/cat.jpg"),
        ("/insecure/wm:0.5:soea:10:20:0.2/plain/cat.jpg", "/wm:logo:0.5:se:10:20:0.2/cat.jpg"),
        ("/insecure/wm:1:re/plain/cat.jpg", "/wm:logo:1:tile:0:0:0/cat.jpg"),
        ("/insecure/sm:1/plain/cat.jpg", "/strip:1/cat.jpg"),
        ("/insecure/sm:0/plain/cat.jpg", "/strip:0/cat.jpg"),
        ("/insecure/sm:1/kcr:1/plain/cat.jpg", "/strip:copyright/cat.jpg"),
        ("/insecure/scp:0/plain/cat.jpg", "/icc:keep/cat.jpg"),
        ("/insecure/ar:0/plain/cat.jpg", "/ar:0/cat.jpg"),
        ("/insecure/fn:holiday/att:1/plain/cat.jpg", "/fn:holiday/att:1/cat.jpg"),
        ("/insecure/fn:\(b64("été.jpg")):1/plain/cat.jpg", "/fn:%C3%A9t%C3%A9.jpg/cat.jpg"),
        ("/insecure/exp:4102444800/cb:v2/plain/cat.jpg", "/exp:4102444800/cb:v2/cat.jpg"),
        ("/insecure/pg:1/plain/scan.tiff@png", "/page:1/f:png/scan.tiff"),
        ("/insecure/dpr:2/w:150/plain/cat.jpg", "/rs:150:0:fit/dpr:2/cat.jpg"),
        ("/insecure/f:jpg/plain/logo.png", "/f:jpeg/logo.png"),
        ("/insecure/plain/local:///rs:1/cat.jpg", "/-/rs:1/cat.jpg"),
        ("/insecure/plain/local:///my%40cat.jpg@webp", "/f:webp/my@cat.jpg"),
    ]

    @Test func imgproxyURLsAreTheirNativeTwins() throws {
        let gate = gate()
        for (adapted, native) in Self.twins {
            let a = try gate.imageRequest(for: request(adapted))
            let n = try gate.imageRequest(for: request(native))
            #expect(a.canonical == n.canonical, "\(adapted): \(a.canonical) vs \(n.canonical)")
            #expect(a == n, "\(adapted)")
        }
    }

    /// Native URLs (a signature-shaped first segment, `unsafe`, option segments) stay native.
    @Test func nativeURLsAreNotClaimed() throws {
        let adapter = ImgproxyAdapter()
        for uri in ["/unsafe/rs:300:200:fill/cat.jpg", "/w:300/cat.jpg", "/cat.jpg", "/unsafe/photos/plainly.jpg",
                    "/AAAA/w:300/Y2F0.jpg", "/\(Self.b64("ftp://x/y"))/w:1/\(Self.b64("ftp://x/y"))"] {
            #expect(try adapter.adapt(path: uri, query: nil) == nil, "\(uri)")
        }
    }

    @Test func signaturesAreImgproxys() throws {
        let keyed = gate(keys: [Self.key])
        let path = "/rs:fill:300:200:0/g:sm/plain/local:///cat.jpg@webp"
        let signed = "/" + URLSignature.signature(of: path, key: Self.key) + path
        let (req, provenance) = try keyed.admit(request(signed))
        #expect(provenance == .signed)
        #expect(req.canonical == (try keyed.imageRequest(for: request("/rs:300:200:fill/g:smart/f:webp/cat.jpg"))).canonical)

        // A combining mark after a `/` (one Character with it): the signature still covers the bytes.
        let marked = "/w:10/plain/\u{0593}cat.jpg"
        let (markedRequest, markedProvenance) = try keyed.admit(request("/" + URLSignature.signature(of: marked, key: Self.key) + marked))
        #expect(markedProvenance == .signed && markedRequest.sourcePath == "\u{0593}cat.jpg")

        // Truncated signatures (IMGPROXY_SIGNATURE_SIZE).
        let short = self.gate(keys: [Self.key], size: 8)
        #expect(try short.admit(request("/" + URLSignature.signature(of: path, key: Self.key, size: 8) + path)).provenance == .signed)

        // A tampered signature, a tampered path, another key: 403, never rendered.
        var sig = Array(URLSignature.signature(of: path, key: Self.key))
        sig[3] = sig[3] == "A" ? "B" : "A"
        let otherKey = SigningKey(key: Array("other".utf8), salt: Self.key.salt)
        for bad in ["/" + String(sig) + path, signed.replacingOccurrences(of: "300", with: "301"),
                    "/" + URLSignature.signature(of: path, key: otherKey) + path, "/AAAA" + path] {
            do {
                _ = try keyed.imageRequest(for: request(bad))
                Issue.record("\(bad) was admitted")
            } catch let error as AdapterError {
                #expect(error.isBadSignature, "\(bad): \(error.message)")
                #expect(ErrorMapping.map(error).status == 403)
            }
        }
        // insecure while keyed: refused unless adapters.allow_unsigned.
        #expect(throws: RequestRefusal.self) { try keyed.imageRequest(for: request("/insecure" + path)) }
        #expect(try self.gate(keys: [Self.key], allowUnsigned: true).admit(request("/insecure" + path)).provenance == .unsigned)
    }

    /// (URL, words the 400's message must hold).
    static let refused: [(String, [String])] = [
        ("/insecure/exar:1/w:300/plain/cat.jpg", ["'exar'", "aspect ratio"]),
        ("/insecure/ex:1:sm/w:300/plain/cat.jpg", ["extend gravity"]),
        ("/insecure/rs:fill-down:300:200/plain/cat.jpg", ["fill-down"]),
        ("/insecure/mw:300/plain/cat.jpg", ["'mw'"]),
        ("/insecure/pix:5/plain/cat.jpg", ["'pix'", "pixelate"]),
        ("/insecure/foo:1/plain/cat.jpg", ["'foo'"]),
        ("/insecure/g:no:10:0/plain/cat.jpg", ["offsets"]),
        ("/insecure/c:0.5:0.5/plain/cat.jpg", ["crop width"]),
        ("/insecure/f:best/plain/cat.jpg", ["best"]),
        ("/insecure/plain/cat.jpg@tiff", ["tiff"]),
        ("/insecure/f:png/plain/cat.jpg@webp", ["disagree"]),
        ("/insecure/rot:45/plain/cat.jpg", ["rotate"]),
        ("/insecure/plain/https://evil.example/x.jpg", ["not under a configured origin"]),
        ("/insecure/plain/s3://bucket/x.jpg", ["s3"]),
        ("/insecure/\(b64("http://169.254.169.254/latest/meta-data"))", ["not under a configured origin"]),
        ("/insecure/enc/abcdef", ["encrypted"]),
        ("/insecure/w:300/plain/", ["no source"]),
        ("/insecure/plain/local:///cat.jpg%3Fx", ["query"]),
        ("/insecure/plain/cat%zz.jpg", ["percent-encoding"]),
        ("/insecure/fn:a%2Fb/plain/cat.jpg", ["without /"]),
        ("/insecure/sm:maybe/plain/cat.jpg", ["strip_metadata"]),
    ]

    @Test func untranslatableURLsAreOneLine400s() {
        URLAdapterTests.expectOneLine400s(gate(), Self.refused)
    }

    /// `wm` without `adapters.imgproxy_watermark` is refused, saying which setting.
    @Test func watermarkNeedsTheSetting() throws {
        let adapter = ImgproxyAdapter()
        #expect(throws: AdapterError.self) { try adapter.adapt(path: "/insecure/wm:0.5/plain/cat.jpg", query: nil) }
        #expect(try adapter.adapt(path: "/insecure/wm:0/plain/cat.jpg", query: nil)?.options == [])
    }
}
