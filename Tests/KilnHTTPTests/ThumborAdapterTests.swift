import KilnModel
import Testing
@testable import KilnHTTP

/// thumbor URLs (`adapters.thumbor`, `ThumborAdapter`): the claim rule, the translation of parts
/// and filters, thumbor 7.8's signature, and the refusals, each naming what it refuses.
@Suite struct ThumborAdapterTests {
    /// Signed with libthumbor 2.0.2's `CryptoURL(key="MY_SECURE_KEY").generate(...)`.
    static let key = "MY_SECURE_KEY"
    static let signed = [
        "/_9PpmHDM-9OrPRopm_I7-__oVqA=/300x200/smart/photos/cat.jpg",
        "/f3iRifIbC2bTXae0_7CLfLubj3M=/fit-in/300x200/filters:quality(80):format(webp)/photos/cat.jpg",
        "/cQgDIxGw8573gooFVUonuXNG-9Q=/10x20:110x220/-50x0/left/top/a%20b.jpg",
    ]
    let adapter = ThumborAdapter(origins: URLAdapterTests.origins)
    let keyed = ThumborAdapter(key: ThumborAdapterTests.key, origins: URLAdapterTests.origins)

    func options(_ path: String) throws -> [String]? {
        try adapter.adapt(path: path, query: nil)?.options
    }

    @Test func claimsThumborURLsOnly() throws {
        for native in ["/unsafe/w:300/cat.jpg", "/unsafe/rs:300:200:fill/cat.jpg", "/unsafe/cat.jpg", "/w:300/cat.jpg",
                       "/unsafe/", "/unsafe", "/photos/300x200/cat.jpg", "/unsafe/-/300x200/cat.jpg", "/unsafe/q:80/300x200.jpg",
                       "/abcdefghijklmnopqrstuvwxyz=/x", "/abcdefghijklmnopqrstuvwxyz0+/x", "/_9PpmHDM-9OrPRopm_I7-__oVqA/300x200/cat.jpg"] {
            #expect(try adapter.adapt(path: native, query: nil) == nil, "\(native)")
        }
        for claimed in ["/unsafe/300x200/cat.jpg", "/unsafe/x/cat.jpg", "/unsafe/-0x0/cat.jpg", "/unsafe/fit-in/cat.jpg", "/unsafe/left/cat.jpg",
                        "/unsafe/smart/cat.jpg", "/unsafe/trim/cat.jpg", "/unsafe/trim:top-left:10/cat.jpg", "/unsafe/1x2:3x4/cat.jpg",
                        "/unsafe/filters:grayscale()/cat.jpg", "/unsafe/fit-in/origx100/cat.jpg"] {
            #expect(try adapter.adapt(path: claimed, query: nil)?.adapter == "thumbor", "\(claimed)")
        }
        // Claimed and refused: a thumbor URL that Kiln cannot answer is a 400, never a native URL.
        #expect(throws: AdapterError.self) { try self.adapter.adapt(path: "/unsafe/origx100/cat.jpg", query: nil) }
        // A signature-shaped first segment is claimed; without a key it is refused (403).
        #expect(throws: AdapterError.badSignature("thumbor", "a signed URL, but this server has no thumbor key (adapters.thumbor_key)")) {
            try self.adapter.adapt(path: Self.signed[0], query: nil)
        }
    }

    @Test func translations() throws {
        let cases: [(String, [String])] = [
            ("/unsafe/300x200/cat.jpg", ["rs:300:200:fill", "el:1"]),
            ("/unsafe/300x0/cat.jpg", ["w:300", "el:1"]),
            ("/unsafe/x200/cat.jpg", ["h:200", "el:1"]),
            ("/unsafe/0x0/cat.jpg", []),
            ("/unsafe/origxorig/cat.jpg", []),
            ("/unsafe/fit-in/300x200/cat.jpg", ["rs:300:200:fit"]),
            ("/unsafe/fit-in/origx200/cat.jpg", ["h:200"]),
            ("/unsafe/fit-in/300x200/filters:upscale()/cat.jpg", ["rs:300:200:fit", "el:1"]),
            ("/unsafe/adaptive-fit-in/300x300/cat.jpg", ["rs:300:300:fit"]),
            ("/unsafe/adaptive-fit-in/300x0/cat.jpg", ["w:300"]),
            ("/unsafe/full-fit-in/300x0/cat.jpg", ["w:300", "el:1"]),
            ("/unsafe/-300x-200/cat.jpg", ["rs:300:200:fill", "el:1", "flip:hv"]),
            ("/unsafe/-300x200/cat.jpg", ["rs:300:200:fill", "el:1", "flip:h"]),
            ("/unsafe/-0x-0/cat.jpg", ["flip:hv"]),
            ("/unsafe/fit-in/300x-200/cat.jpg", ["rs:300:200:fit", "flip:v"]),
            ("/unsafe/300x200/left/top/cat.jpg", ["rs:300:200:fill", "el:1", "g:nw"]),
            ("/unsafe/300x200/right/cat.jpg", ["rs:300:200:fill", "el:1", "g:east"]),
            ("/unsafe/300x200/center/bottom/cat.jpg", ["rs:300:200:fill", "el:1", "g:south"]),
            ("/unsafe/300x200/left/middle/smart/cat.jpg", ["rs:300:200:fill", "el:1", "g:smart"]),
            ("/unsafe/300x0/left/cat.jpg", ["w:300", "el:1"]),
            ("/unsafe/10x20:110x220/50x0/cat.jpg", ["crop:100:200:10:20", "w:50", "el:1"]),
            ("/unsafe/0x0:0x0/50x0/cat.jpg", ["w:50", "el:1"]),
            ("/unsafe/trim/300x200/cat.jpg", ["t:0", "rs:300:200:fill", "el:1"]),
            ("/unsafe/trim:top-left:25/cat.jpg", ["t:25"]),
            ("/unsafe/300x200/filters:no_upscale()/cat.jpg", ["rs:300:200:fill"]),
            ("/unsafe/300x200/filters:stretch()/cat.jpg", ["rs:300:200:force", "el:1"]),
            ("/unsafe/filters:quality(70):format(jpg)/cat.jpg", ["q:70", "f:jpeg"]),
            ("/unsafe/filters:format(webp)/cat.jpg", ["f:webp"]),
            ("/unsafe/filters:blur(4):blur(4,2):blur(1)/cat.jpg", ["bl:2.38", "bl:1.85", "bl:0.74"]),
            ("/unsafe/filters:grayscale():brightness(-20):contrast(30):contrast(-30)/cat.jpg", ["gs", "br:-20", "co:23", "co:-51"]),
            ("/unsafe/filters:round_corner(20,255,136,0)/cat.jpg", ["rc:20", "bg:ff8800"]),
            ("/unsafe/filters:round_corner(20|20,0,0,0,1)/cat.jpg", ["rc:20"]),
            ("/unsafe/300x200/filters:fill(fff)/cat.jpg", ["rs:300:200:fill", "el:1", "bg:ffffff"]),
            ("/unsafe/300x200/filters:fill(transparent)/cat.jpg", ["rs:300:200:fill", "el:1"]),
            ("/unsafe/filters:rotate(90):rotate(-90):rotate(180):rotate(360)/cat.jpg", ["rot:270", "rot:90", "rot:180"]),
            ("/unsafe/filters:strip_exif():strip_icc():max_bytes(20000)/cat.jpg", ["strip:1", "icc:srgb", "mb:20000"]),
            ("/unsafe/filters:watermark(logo,10,-20,40)/cat.jpg", ["wm:logo:0.6:sw:10:20:0"]),
            ("/unsafe/filters:watermark('logo',center,center,0,25,none)/cat.jpg", ["wm:logo:1:center:0:0:0.25"]),
            ("/unsafe/filters:watermark(logo,-0,center,100)/cat.jpg", ["wm:logo:0:east:0:0:0"]),
            ("/unsafe/filters:format(png)/a%20b.jpg", ["f:png"]),
            ("/unsafe/filters:blur(1,0.001):round_corner(0,0,0,0):max_bytes(2000000)/cat.jpg", ["mb:2000000"]),
        ]
        for (path, expected) in cases {
            #expect(try options(path) == expected, "\(path)")
        }
        let remote = try #require(try adapter.adapt(path: "/unsafe/300x200/https://img.example.com/originals/2026/cat.jpg", query: nil))
        #expect(remote.sourcePath == "photos/2026/cat.jpg")
        // thumbor's HTTP loader takes URLs without their scheme: an origin's host is read so.
        #expect(try adapter.adapt(path: "/unsafe/300x200/img.example.com/originals/2026/cat.jpg", query: nil)?.sourcePath == "photos/2026/cat.jpg")
        #expect(try adapter.adapt(path: "/unsafe/300x200/img.example.com/other/cat.jpg", query: nil)?.sourcePath == "img.example.com/other/cat.jpg")
        #expect(try adapter.adapt(path: "/unsafe/300x200/photos/img.example.com/cat.jpg", query: nil)?.sourcePath == "photos/img.example.com/cat.jpg")
        #expect(try adapter.adapt(path: "/unsafe/fit-in/x/a%20b.jpg", query: "v=2")?.sourcePath == "a b.jpg")
        #expect(try adapter.adapt(path: "/unsafe/300x200/filters:quality(80)/photos/cat.jpg", query: nil)?.sourcePath == "photos/cat.jpg")
    }

    @Test func signatures() throws {
        for url in Self.signed {
            let adapted = try #require(try keyed.adapt(path: url, query: nil), "\(url)")
            #expect(adapted.signing == .verified, "\(url)")
            // The percent-encoded `=` that thumbor also strips.
            let encoded = url.replacing("=/", with: "%3D/")
            #expect(try keyed.adapt(path: encoded, query: nil)?.signing == .verified, "\(encoded)")
            // Every character of the signature changed in turn: 403.
            let signature = Array(url.dropFirst().prefix(27))
            for i in signature.indices {
                var tampered = signature
                tampered[i] = tampered[i] == "A" ? "B" : "A"
                let path = "/" + String(tampered) + url.dropFirst(28)
                #expect(throws: AdapterError.badSignature("thumbor")) { try self.keyed.adapt(path: path, query: nil) }
            }
            // The signed rest changed, or another key.
            #expect(throws: AdapterError.badSignature("thumbor")) { try self.keyed.adapt(path: url + "x", query: nil) }
            #expect(throws: AdapterError.badSignature("thumbor")) {
                try ThumborAdapter(key: "other", origins: URLAdapterTests.origins).adapt(path: url, query: nil)
            }
        }
        #expect(try keyed.adapt(path: "/unsafe/300x200/cat.jpg", query: nil)?.signing == .unsignedWhileKeyed)
        #expect(try adapter.adapt(path: "/unsafe/300x200/cat.jpg", query: nil)?.signing == .unsigned)
        // A bad signature is a 403 before anything else of the URL is judged.
        #expect(throws: AdapterError.badSignature("thumbor")) {
            try self.keyed.adapt(path: "/" + String(repeating: "A", count: 27) + "=/meta/filters:nope()/x", query: nil)
        }
        #expect(ThumborSignature(key: Self.key).signature(of: "300x200/smart/photos/cat.jpg") == "_9PpmHDM-9OrPRopm_I7-__oVqA=")
    }

    @Test func signedURLsThroughTheGate() throws {
        var configuration = AdapterConfiguration()
        configuration.thumbor = true
        configuration.thumborKey = Self.key
        let gate = RequestGate(adapters: configuration.adapters(origins: URLAdapterTests.origins), parser: SpecParser())
        let (request, provenance) = try gate.admit(HTTPRequest(fastCGIParams: ["REQUEST_URI": Self.signed[0]]))
        #expect(provenance == .signed)
        #expect(request.canonical == (try SpecParser().parse("/rs:300:200:fill/el:1/g:smart/photos/cat.jpg", isDecoded: true)).canonical)
        do {
            _ = try gate.admit(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/A" + Self.signed[0].dropFirst(2)]))
            Issue.record("a tampered signature was accepted")
        } catch {
            #expect(ErrorMapping.map(error).status == 403)
        }
        // unsafe while the key is set: refused unless adapters.allow_unsigned.
        #expect(throws: RequestRefusal.self) { try gate.admit(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/unsafe/300x200/cat.jpg"])) }
    }

    /// (URL, words the 400's message must hold).
    static let refused: [(String, [String])] = [
        ("/unsafe/meta/300x200/cat.jpg", ["'meta'", "f:json"]),
        ("/unsafe/debug/300x200/cat.jpg", ["'debug'"]),
        ("/unsafe/trim:10/cat.jpg", ["trim:10", "bottom-right"]),
        ("/unsafe/trim:bottom-right/cat.jpg", ["trim:bottom-right", "top-left"]),
        ("/unsafe/trim/1x1:5x5/cat.jpg", ["trim with AxB:CxD"]),
        ("/unsafe/origx200/cat.jpg", ["orig"]),
        ("/unsafe/adaptive-fit-in/300x200/cat.jpg", ["adaptive-fit-in", "orientation"]),
        ("/unsafe/full-fit-in/300x200/cat.jpg", ["full-fit-in", "covers the box"]),
        ("/unsafe/fit-in/300x200/filters:fill(fff)/cat.jpg", ["fill()", "pads"]),
        ("/unsafe/300x200/filters:fill(auto)/cat.jpg", ["fill(auto)"]),
        ("/unsafe/300x200/filters:fill(blur)/cat.jpg", ["fill(blur)"]),
        ("/unsafe/300x200/filters:fill(red)/cat.jpg", ["fill(red)"]),
        ("/unsafe/filters:focal(10x10:20x20)/cat.jpg", ["'focal'", "g:fp"]),
        ("/unsafe/filters:sharpen(1,1,true)/cat.jpg", ["'sharpen'"]),
        ("/unsafe/filters:nope():other(1)/cat.jpg", ["unknown filters", "'nope'", "'other'"]),
        ("/unsafe/filters:quality(0)/cat.jpg", ["quality=0"]),
        ("/unsafe/filters:max_bytes(0)/cat.jpg", ["max_bytes(0)"]),
        ("/unsafe/filters:format(heic)/cat.jpg", ["format(heic)", "HEIC"]),
        ("/unsafe/filters:format(tiff)/cat.jpg", ["format(tiff)"]),
        ("/unsafe/filters:rotate(45)/cat.jpg", ["rotate(45)", "quarter"]),
        ("/unsafe/filters:brightness(101)/cat.jpg", ["brightness(101)"]),
        ("/unsafe/filters:round_corner(20|10,0,0,0)/cat.jpg", ["round_corner", "one radius"]),
        ("/unsafe/filters:round_corner(20,0,0,0):fill(fff)/cat.jpg", ["two background colours"]),
        ("/unsafe/filters:watermark(https://example.com/logo.png,0,0,0)/cat.jpg", ["watermark(", "URL", "[watermarks]"]),
        ("/unsafe/filters:watermark(logo,repeat,repeat,0)/cat.jpg", ["repeat"]),
        ("/unsafe/filters:watermark(logo,10p,0,0)/cat.jpg", ["10p", "percent"]),
        ("/unsafe/filters:watermark(logo,0,0,0,10,10)/cat.jpg", ["h_ratio"]),
        ("/unsafe/filters:quality(80)", ["not closed"]),
        ("/unsafe/filters:quality(80)/", ["no image"]),
        ("/unsafe/300x200/", ["no image"]),
        ("/unsafe/filters:grayscale/cat.jpg", ["not closed"]),
        ("/unsafe/filters:grayscale(1)/cat.jpg", ["grayscale() takes 0"]),
        ("/unsafe/300x200/https://evil.example/x.jpg", ["not under a configured origin"]),
        ("/unsafe/300x200/a%2Fb.jpg", ["encoded slash"]),
        ("/unsafe/9999999x1/cat.jpg", ["width 9999999"]),
    ]

    @Test func refusalsNameTheParameter() {
        for (url, words) in Self.refused {
            do {
                let adapted = try adapter.adapt(path: url, query: nil)
                Issue.record("\(url) gave \(String(describing: adapted?.options))")
            } catch {
                #expect(ErrorMapping.map(error).status == 400, "\(url)")
                #expect(!error.message.contains("\n"))
                for word in words { #expect(error.message.contains(word), "\(url): \(error.message)") }
            }
        }
    }

    @Test func conversions() {
        #expect(ThumborFilters.contrast(0) == 0)
        #expect(ThumborFilters.contrast(100) == 100)
        #expect(ThumborFilters.contrast(-100) == -100)
        #expect(ThumborFilters.format(ThumborFilters.blurSigma(radius: 10, sigma: 0)) == "5.62")
        #expect(ThumborFilters.format(ThumborFilters.blurSigma(radius: 150, sigma: 0)) == "81.17")
        #expect(abs(ThumborFilters.exponential(-1) - 0.36787944117144233) < 1e-12)
        #expect(abs(ThumborFilters.exponential(-30.5) - 5.675685232632723e-14) < 1e-24)
    }
}
