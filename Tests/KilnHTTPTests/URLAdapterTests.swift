import KilnModel
import Testing
@testable import KilnHTTP

/// The URL adapters (`adapters.*`) through `RequestGate`: each adapted URL is the same request as
/// its native twin (one canonical form, so one cache key and ETag); anything an adapter cannot
/// translate is a 400 naming it; signing and the allow-lists apply.
@Suite struct URLAdapterTests {
    static let key = SigningKey(key: Array(repeating: 0x42, count: 32), salt: Array(repeating: 0x17, count: 32))
    static let origins = [AdapterOrigin(name: "photos", baseURL: "https://img.example.com/originals/")]
    let parser = SpecParser()

    func request(_ uri: String, trusted: Bool = false) -> HTTPRequest {
        var params = ["REQUEST_URI": uri]
        if trusted { params["KILN_TRUSTED"] = "1" }
        return HTTPRequest(fastCGIParams: params)
    }

    func gate(_ signature: URLSignature = URLSignature(), allowList: VariantAllowList = VariantAllowList(),
              allowUnsigned: Bool = false) -> RequestGate {
        var configuration = AdapterConfiguration()
        configuration.nextjs = true
        configuration.cloudflare = true
        configuration.imgix = true
        configuration.thumbor = true
        configuration.allowUnsigned = allowUnsigned
        return RequestGate(signature: signature, allowList: allowList, adapters: configuration.adapters(origins: Self.origins), parser: parser)
    }

    /// (adapted URL, native twin).
    static let twins: [(String, String)] = [
        ("/_next/image?url=%2Fphotos%2Fcat.jpg&w=640&q=75", "/w:640/q:75/f:auto/photos/cat.jpg"),
        ("/_next/image?w=16&url=%2Fa%20b.jpg", "/w:16/f:auto/a%20b.jpg"),
        ("/_next/image?url=https%3A%2F%2Fimg.example.com%2Foriginals%2F2026%2Fcat.jpg&w=1080&q=90", "/w:1080/q:90/f:auto/photos/2026/cat.jpg"),
        ("/_next/image?url=HTTPS%3A%2F%2FIMG.example.com%2Foriginals%2Fcat.jpg&w=64&q=50", "/w:64/q:50/f:auto/photos/cat.jpg"),
        ("/cdn-cgi/image/width=300/cat.jpg", "/w:300/cat.jpg"),
        ("/cdn-cgi/image/w=300,h=200,fit=cover,gravity=auto/cat.jpg", "/rs:300:200:fill/el:1/g:smart/cat.jpg"),
        ("/cdn-cgi/image/width=300,height=200,fit=crop,gravity=left/cat.jpg", "/rs:300:200:fill/g:west/cat.jpg"),
        ("/cdn-cgi/image/width=300,height=200,fit=contain/cat.jpg", "/rs:300:200:fit/el:1/cat.jpg"),
        ("/cdn-cgi/image/width=300,height=200,fit=scale-down/cat.jpg", "/rs:300:200/cat.jpg"),
        ("/cdn-cgi/image/height=200,fit=crop,gravity=0.25x0.75/cat.jpg", "/h:200/g:fp:0.25:0.75/cat.jpg"),
        ("/cdn-cgi/image/quality=80,format=auto,dpr=2/cat.jpg", "/q:80/f:auto/dpr:2/cat.jpg"),
        ("/cdn-cgi/image/f=json/cat.jpg", "/f:json/cat.jpg"),
        ("/cdn-cgi/image/format=baseline-jpeg/cat.jpg", "/f:jpeg/pg:0/cat.jpg"),
        ("/cdn-cgi/image/blur=10,sharpen=1.5/cat.jpg", "/bl:5/sh:1.5/cat.jpg"),
        ("/cdn-cgi/image/background=%23FF8800,rotate=90,flip=h,metadata=keep/cat.jpg", "/bg:ff8800/rot:90/flip:h/strip:0/cat.jpg"),
        ("/cdn-cgi/image/background=%23f80,metadata=none/cat.jpg", "/bg:ff8800/strip:1/cat.jpg"),
        ("/cdn-cgi/image/metadata=copyright/cat.jpg", "/strip:copyright/cat.jpg"),
        ("/cdn-cgi/image/width=300/https://img.example.com/originals/2026/cat.jpg", "/w:300/photos/2026/cat.jpg"),
        ("/cdn-cgi/image/width=300/w:1/cat.jpg", "/w:300/-/w:1/cat.jpg"),
        ("/photos/cat.jpg?w=300&fit=crop", "/w:300/el:1/photos/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=crop&crop=top,left", "/rs:300:200:fill/el:1/g:nw/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=min&crop=entropy", "/rs:300:200:fill/g:smart/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=max", "/rs:300:200:fit/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=scale", "/rs:300:200:force/el:1/cat.jpg"),
        ("/cat.jpg?h=120&auto=format&q=60&dpr=1.5", "/h:120/el:1/f:auto/q:60/dpr:1.5/cat.jpg"),
        ("/cat.jpg?fm=pjpg&bg=fff&blur=25&flip=v&rot=180&ixlib=js-3.8.0", "/f:jpeg/pg:1/bg:ffffff/bl:2.5/flip:v/rot:180/cat.jpg"),
        ("/cat.jpg?fm=webp&bg=FF112233", "/f:webp/bg:112233/cat.jpg"),
        ("/cdn-cgi/image/trim=10;20;30;40,width=300/cat.jpg", "/cut:10:20:30:40/w:300/cat.jpg"),
        ("/cdn-cgi/image/width=300,trim.top=5,trim.left=7,trim.width=100,trim.height=50/cat.jpg", "/cut:5:0:0:7:100:50/w:300/cat.jpg"),
        ("/cdn-cgi/image/trim.bottom=12/cat.jpg", "/cut:0:0:12:0/cat.jpg"),
        ("/cdn-cgi/image/trim=0;0;0;0,width=30/cat.jpg", "/w:30/cat.jpg"),
        ("/cdn-cgi/image/anim=false/anim.gif", "/frame:0/anim.gif"),
        ("/cdn-cgi/image/anim=true,width=10/cat.jpg", "/w:10/cat.jpg"),
        ("/cdn-cgi/image/onerror=redirect,width=10/cat.jpg", "/w:10/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=crop&crop=focalpoint&fp-x=0.25&fp-y=0.75", "/rs:300:200:fill/el:1/g:fp:0.25:0.75/cat.jpg"),
        ("/cat.jpg?w=300&h=200&fit=crop&crop=focalpoint", "/rs:300:200:fill/el:1/g:fp:0.5:0.5/cat.jpg"),
        ("/cat.jpg?w=300&auto=compress", "/w:300/el:1/q:45/cat.jpg"),
        ("/cat.jpg?w=300&auto=format%2Ccompress&q=70", "/w:300/el:1/f:auto/q:70/cat.jpg"),
        ("/cat.jpg?w=300&ch=DPR%2CSave-Data", "/w:300/el:1/ch:1/cat.jpg"),
        ("/cat.jpg?trim=auto", "/t:11/cat.jpg"),
        ("/cat.jpg?trim=auto&trim-md=30&w=100", "/t:30/w:100/el:1/cat.jpg"),
        ("/cat.jpg?trim=color&trim-color=ffffff&trim-tol=20", "/t:20:ffffff/cat.jpg"),
        ("/cat.jpg?trim=color&trim-tol=5", "/t:5/cat.jpg"),
        ("/unsafe/300x200/cat.jpg", "/rs:300:200:fill/el:1/cat.jpg"),
        ("/unsafe/fit-in/300x200/photos/cat.jpg", "/rs:300:200:fit/photos/cat.jpg"),
        ("/unsafe/-300x-200/left/top/cat.jpg", "/rs:300:200:fill/el:1/g:nw/flip:hv/cat.jpg"),
        ("/unsafe/10x20:110x220/50x0/cat.jpg", "/crop:100:200:10:20/w:50/el:1/cat.jpg"),
        ("/unsafe/300x200/smart/filters:no_upscale():quality(70):format(webp)/cat.jpg", "/rs:300:200:fill/g:smart/q:70/f:webp/cat.jpg"),
        ("/unsafe/trim/fit-in/0x200/filters:upscale()/cat.jpg", "/t:0/h:200/el:1/cat.jpg"),
        ("/unsafe/filters:blur(4):grayscale():brightness(20):contrast(30)/cat.jpg", "/bl:2.38/gs/br:20/co:23/cat.jpg"),
        ("/unsafe/300x300/filters:round_corner(20,255,255,255):rotate(90):strip_exif():strip_icc():max_bytes(20000)/cat.jpg",
         "/rs:300:300:fill/el:1/rc:20/rot:270/strip:1/icc:srgb/mb:20000/bg:ffffff/cat.jpg"),
        ("/unsafe/300x200/filters:stretch()/https://img.example.com/originals/2026/cat.jpg", "/rs:300:200:force/el:1/photos/2026/cat.jpg"),
        ("/unsafe/fit-in/300x200/w:1/cat.jpg", "/rs:300:200:fit/-/w:1/cat.jpg"),
    ]

    @Test func adaptedURLsAreTheirNativeTwins() throws {
        let gate = gate()
        for (adapted, native) in Self.twins {
            let a = try gate.imageRequest(for: request(adapted))
            let n = try gate.imageRequest(for: request(String(native)))
            #expect(a == n, "\(adapted)")
            #expect(a.canonical == n.canonical, "\(adapted)")
        }
    }

    @Test func offByDefault() throws {
        let plain = RequestGate(parser: parser)
        #expect(try plain.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=640")).sourcePath == "_next/image")
        #expect(try plain.imageRequest(for: request("/cat.jpg?w=300")).canonical == "-/cat.jpg")
        #expect(try plain.imageRequest(for: request("/cdn-cgi/image/width=300/cat.jpg")).sourcePath == "cdn-cgi/image/width=300/cat.jpg")
    }

    /// (URL, words the 400's message must hold).
    static let refused: [(String, [String])] = [
        ("/_next/image?url=%2Fcat.jpg&w=640&q=75&foo=1", ["nextjs", "'foo'"]),
        ("/_next/image?url=%2Fcat.jpg", ["missing w="]),
        ("/_next/image?w=640", ["missing url="]),
        ("/_next/image?url=%2Fcat.jpg&w=640&w=320", ["'w' given twice"]),
        ("/_next/image?url=%2Fcat.jpg&w=-1", ["w=-1"]),
        ("/_next/image?url=%2Fcat.jpg&w=1e9", ["w=1e9"]),
        ("/_next/image?url=%2Fcat.jpg&w=99999999", ["w=99999999"]),
        ("/_next/image?url=%2Fcat.jpg&w=640&q=0", ["q=0"]),
        ("/_next/image?url=https%3A%2F%2Fevil.example%2Fx.jpg&w=640", ["evil.example", "not under a configured origin"]),
        ("/_next/image?url=http%3A%2F%2F169.254.169.254%2Flatest&w=640", ["not under a configured origin"]),
        ("/_next/image?url=https%3A%2F%2Fimg.example.com.evil.example%2Foriginals%2Fx.jpg&w=640", ["not under a configured origin"]),
        ("/_next/image?url=%2F%2Fevil.example%2Fx.jpg&w=640", ["must be a path"]),
        ("/_next/image?url=file%3A%2F%2F%2Fetc%2Fpasswd&w=640", ["must be a path"]),
        ("/_next/image?url=%2Fcat.jpg%3Fv%3D1&w=640", ["query"]),
        ("/_next/image?url=%2Fa%252Fb.jpg&w=640", ["encoded slash"]),
        ("/_next/image?url=%2Fcat.jpg&w=640&q=75%00", ["NUL"]),
        ("/cdn-cgi/image/width=300,trim=10/cat.jpg", ["trim=10", "<top>;<right>;<bottom>;<left>"]),
        ("/cdn-cgi/image/trim=1;2;3;4,trim.top=3/cat.jpg", ["give one form"]),
        ("/cdn-cgi/image/trim.width=10,trim.right=3/cat.jpg", ["trim.width and trim.right"]),
        ("/cdn-cgi/image/trim.height=0/cat.jpg", ["at least 1"]),
        ("/cdn-cgi/image/trim.top=-1/cat.jpg", ["trim.top=-1"]),
        ("/cdn-cgi/image/trim=1;2;3/cat.jpg", ["trim=1;2;3"]),
        ("/cdn-cgi/image/anim=maybe/cat.jpg", ["anim=maybe"]),
        ("/cdn-cgi/image/onerror=404/cat.jpg", ["onerror=404"]),
        ("/cdn-cgi/image/width=300,brightness=2/cat.jpg", ["'brightness'"]),
        ("/cdn-cgi/image/width=300,fit=pad/cat.jpg", ["fit=pad"]),
        ("/cdn-cgi/image/fit=cover/cat.jpg", ["fit needs width or height"]),
        ("/cdn-cgi/image/width=300,width=400/cat.jpg", ["given twice"]),
        ("/cdn-cgi/image/width=300,w=400/cat.jpg", ["given twice"]),
        ("/cdn-cgi/image/gravity=face,width=3/cat.jpg", ["gravity=face"]),
        ("/cdn-cgi/image/gravity=2x0.5/cat.jpg", ["gravity x"]),
        ("/cdn-cgi/image/background=red/cat.jpg", ["background=red"]),
        ("/cdn-cgi/image/rotate=45/cat.jpg", ["rotate=45"]),
        ("/cdn-cgi/image/dpr=1e9/cat.jpg", ["dpr=1e9"]),
        ("/cdn-cgi/image/blur=251/cat.jpg", ["blur=251"]),
        ("/cdn-cgi/image/width=300", ["no source"]),
        ("/cdn-cgi/image/width=300/", ["no source"]),
        ("/cdn-cgi/image/width/cat.jpg", ["has no value"]),
        ("/cdn-cgi/image/width=300/https://evil.example/x.jpg", ["not under a configured origin"]),
        ("/cdn-cgi/image/width=300/cat.jpg?x=1", ["query string"]),
        ("/cat.jpg?w=300&s=abc", ["imgix", "no imgix token is configured"]),
        ("/cat.jpg?w=300&auto=enhance", ["auto=enhance"]),
        ("/cat.jpg?w=300&auto=format,format", ["auto=format,format"]),
        ("/cat.jpg?fp-x=0.5&w=3", ["fp-x and fp-y need crop=focalpoint"]),
        ("/cat.jpg?crop=top&fp-y=0.5&w=3", ["need crop=focalpoint"]),
        ("/cat.jpg?crop=focalpoint&fp-x=2&w=3", ["fp-x=2"]),
        ("/cat.jpg?trim=fuzzy", ["trim=fuzzy"]),
        ("/cat.jpg?trim-md=3", ["trim-md needs trim"]),
        ("/cat.jpg?trim=auto&trim-tol=3", ["trim-tol needs trim=color"]),
        ("/cat.jpg?trim=color&trim-md=3", ["trim-md needs trim=auto"]),
        ("/cat.jpg?trim=auto&trim-md=300", ["trim-md=300"]),
        ("/cat.jpg?trim=color&trim-color=red", ["trim-color=red"]),
        ("/cat.jpg?mark=https%3A%2F%2Fex.com%2Flogo.png", ["configured watermarks", "not a URL"]),
        ("/cat.jpg?mark=logo%20x", ["mark=logo x"]),
        ("/cat.jpg?mark-alpha=50&w=3", ["mark-alpha needs mark"]),
        ("/cat.jpg?mark=logo&mark-w=120", ["mark-w=120", "fraction"]),
        ("/cat.jpg?mark=logo&mark-alpha=101", ["mark-alpha=101"]),
        ("/cat.jpg?mark=logo&mark-align=top,bottom", ["mark-align=top,bottom"]),
        ("/cat.jpg?mark=logo&mark-scale=3", ["'mark-scale'"]),
        ("/cat.jpg?ch=Viewport-Width", ["ch=Viewport-Width"]),
        ("/cat.jpg?auto=format&fm=png", ["drop fm"]),
        ("/cat.jpg?w=0.5", ["w=0.5"]),
        ("/cat.jpg?fit=facearea&w=3", ["fit=facearea"]),
        ("/cat.jpg?crop=faces&w=3", ["crop=faces"]),
        ("/cat.jpg?rot=45", ["rot=45"]),
        ("/cat.jpg?bg=80112233", ["bg=80112233"]),
        ("/cat.jpg?fm=gif", ["fm=gif"]),
        ("/cat.jpg?dpr=5", ["dpr=5"]),
    ]

    @Test func untranslatableURLsAreOneLine400s() {
        Self.expectOneLine400s(gate(), Self.refused)
    }

    /// Each URL is refused by `gate` with a one-line 400 whose message holds the words.
    static func expectOneLine400s(_ gate: RequestGate, _ refused: [(String, [String])]) {
        for (url, words) in refused {
            do {
                let r = try gate.imageRequest(for: HTTPRequest(fastCGIParams: ["REQUEST_URI": url]))
                Issue.record("\(url) gave \(r.canonical)")
            } catch let error as AdapterError {
                let mapped = ErrorMapping.map(error)
                #expect(mapped.status == 400, "\(url)")
                #expect(!mapped.message.contains("\n"))
                for word in words { #expect(mapped.message.contains(word), "\(url): \(mapped.message)") }
            } catch {
                Issue.record("\(url): \(error)")
            }
        }
    }

    @Test func nativeParserErrorsStillApply() {
        let gate = gate()
        // The whole URL counts towards limits.max_path_bytes before any query is read.
        let long = "/_next/image?url=%2Fcat.jpg&w=64&q=" + String(repeating: "9", count: 65_536)
        #expect(throws: SpecError.malformedPath(reason: "URL too long: \(long.utf8.count) bytes, at most 8192")) {
            try gate.imageRequest(for: self.request(long))
        }
        // Translated, then refused by the parser's own checks: a 400 (or 403 for a path escape).
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/_next/image?url=%2F..%2Fetc%2Fpasswd&w=64")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/cdn-cgi/image/width=20000/cat.jpg")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/cdn-cgi/image/blur=250/cat.jpg")) }
    }

    @Test func unsignedAdaptedURLsMeetTheAllowLists() throws {
        let refuse = AllowListConfiguration.with(widths: [640, 750, 828, 1080], heights: [], qualities: [75], policy: .refuse)
        let gate = gate(allowList: refuse)
        #expect(try gate.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=640&q=75")).canonical == "rs:640:0:fit/q:75/f:auto/-/cat.jpg")
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/_next/image?url=%2Fcat.jpg&w=641&q=75")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/_next/image?url=%2Fcat.jpg&w=640&q=76")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/cdn-cgi/image/width=300/cat.jpg")) }
        #expect(throws: SpecError.self) { try gate.imageRequest(for: self.request("/cat.jpg?w=300")) }
        let snap = self.gate(allowList: AllowListConfiguration.with(widths: [640, 750], heights: [], qualities: [], policy: .snap))
        #expect(try snap.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=641")).canonical == "rs:750:0:fit/f:auto/-/cat.jpg")
        // A trusted request is nginx's rewrite, parsed as rewritten: no adapter reads it.
        #expect(try gate.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=641", trusted: true)).canonical == "-/_next/image")
    }

    /// Issue 36: a query on an nginx rewrite (trusted) neither runs imgix parameters unsigned and
    /// outside the allow-lists nor breaks the rewrite; a query that names no imgix parameter is
    /// ignored on native URLs, as the docs say.
    @Test func trustedRewritesIgnoreTheirQuery() throws {
        let refuse = AllowListConfiguration.with(widths: [320, 640], heights: [], qualities: [], policy: .refuse)
        let gate = gate(URLSignature(keys: [Self.key], allowUnsigned: false), allowList: refuse)
        for query in ["w=1500&blur=20&fm=png", "v=2", "w=1500", "s=abc"] {
            let r = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/thumb/200x200/photos/cat.jpg?\(query)",
                                                "DOCUMENT_URI": "/rs:200:200:fill/-/photos/cat.jpg", "KILN_TRUSTED": "1"])
            let (parsed, provenance) = try gate.admit(r)
            #expect(parsed.canonical == "rs:200:200:fill/-/photos/cat.jpg", "\(query)")
            #expect(provenance == .trusted)
        }
        let open = self.gate(allowUnsigned: true)
        #expect(try open.imageRequest(for: request("/w:300/cat.jpg?v=2")).canonical == "rs:300:0:fit/-/cat.jpg")
        #expect(try open.imageRequest(for: request("/cat.jpg?utm_source=mail&v=3")).canonical == "-/cat.jpg")
        #expect(throws: AdapterError.self) { try open.imageRequest(for: self.request("/cat.jpg?w=300&s=0123abcd")) }
    }

    @Test func signingRefusesAdaptersUnlessAllowed() throws {
        let signing = URLSignature(keys: [Self.key], allowUnsigned: false)
        let refused = gate(signing)
        do {
            _ = try refused.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=640"))
            Issue.record("accepted")
        } catch {
            let mapped = ErrorMapping.map(error)
            #expect(mapped.status == 403)
            #expect(mapped.message.contains("adapters.allow_unsigned"))
        }
        #expect(throws: RequestRefusal.self) { try refused.imageRequest(for: self.request("/cdn-cgi/image/width=300/cat.jpg")) }
        #expect(throws: RequestRefusal.self) { try refused.imageRequest(for: self.request("/cat.jpg?w=300")) }
        // A bad adapted URL is still a 400, before the signing question.
        #expect(throws: AdapterError.self) { try refused.imageRequest(for: self.request("/cdn-cgi/image/trim=1/cat.jpg")) }
        // Trusted: nginx's rewrite, never adapted. With adapters.allow_unsigned: accepted, and the allow-lists apply.
        #expect(try refused.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=640", trusted: true)).canonical == "-/_next/image")
        let allowed = gate(signing, allowList: AllowListConfiguration.with(widths: [640], heights: [], qualities: [], policy: .refuse),
                           allowUnsigned: true)
        #expect(try allowed.imageRequest(for: request("/_next/image?url=%2Fcat.jpg&w=640")).canonical == "rs:640:0:fit/f:auto/-/cat.jpg")
        #expect(throws: SpecError.self) { try allowed.imageRequest(for: self.request("/_next/image?url=%2Fcat.jpg&w=641")) }
        // Signed native URLs are unchanged.
        let signed = try #require(allowed.signature.sign("/w:641/cat.jpg"))
        #expect(try allowed.admit(request(signed)).provenance == .signed)
    }

    @Test func presetsOnlyRefusesAdaptedOptions() {
        var gate = gate()
        gate.policy = OptionPolicy(presetsOnly: true)
        #expect(throws: PolicyError.self) { try gate.imageRequest(for: self.request("/_next/image?url=%2Fcat.jpg&w=640")) }
    }
}
