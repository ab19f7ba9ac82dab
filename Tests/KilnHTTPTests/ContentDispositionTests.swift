import KilnModel
import Testing
@testable import KilnHTTP

@Suite struct ContentDispositionTests {
    func value(_ path: String, filename: String? = nil, attachment: Bool = false, format: ImageFormat? = .webp) -> String {
        let r = ImageRequest(sourcePath: path, download: DownloadOptions(filename: filename, attachment: attachment))
        return ContentDisposition.value(for: r, format: format)
    }

    @Test func defaultIsInlineWithTheSourceBaseNameAndTheOutputExtension() {
        #expect(value("photos/2024/cat.jpg") == "inline; filename=\"cat.webp\"")
        #expect(value("cat.jpg", format: .jpeg) == "inline; filename=\"cat.jpg\"")
        #expect(value("noext", format: .png) == "inline; filename=\"noext.png\"")
        #expect(value("cat.jpg", filename: "Holiday 2024", attachment: true) == "attachment; filename=\"Holiday 2024.webp\"")
        #expect(value("cat.jpg", filename: "report.final.pdf", format: .avif) == "inline; filename=\"report.final.avif\"")
    }

    @Test func nonASCIINamesGetAnRFC8187FormAndAnASCIIFallback() {
        #expect(value("a.jpg", filename: "café ünïcode") ==
            "inline; filename=\"caf_ _n_code.webp\"; filename*=UTF-8''caf%C3%A9%20%C3%BCn%C3%AFcode.webp")
        #expect(value("猫.png", format: .png) == "inline; filename=\"_.png\"; filename*=UTF-8''%E7%8C%AB.png")
    }

    @Test func hostileNamesCannotBreakTheHeader() {
        let hostile = [
            "a\r\nSet-Cookie: x=1", "a\"; filename=evil.exe", "../../etc/passwd", "..\\..\\boot.ini", "\u{202E}gpj.exe",
            "a\u{0}b", "a\u{85}b\u{2028}c", "...", "  ", "%0D%0A", String(repeating: "x", count: 5000), "a;b=c",
        ]
        for name in hostile {
            let v = value("a.jpg", filename: name)
            #expect(!v.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || (0x80..<0xA0).contains($0.value) }, "\(v)")
            #expect(!v.contains("\u{202E}") && !v.contains("\u{2028}"))
            // One quoted parameter (and the starred one): no quote, backslash, slash or ';' inside.
            let quoted = v.split(separator: "\"", omittingEmptySubsequences: false)
            #expect(quoted.count == 3, "\(v)")
            let inside = quoted[1]
            #expect(!inside.contains("\\") && !inside.contains("/") && !inside.contains(";") && !inside.hasPrefix("."), "\(v)")
            #expect(inside.count <= ContentDisposition.maxStemCharacters + 5, "\(v)")
            #expect(inside.hasSuffix(".webp"))
        }
        #expect(value("a.jpg", filename: "../../etc/passwd") == "inline; filename=\"_.._etc_passwd.webp\"")
        #expect(value("a.jpg", filename: "...") == "inline; filename=\"image.webp\"")
        #expect(value("a.jpg", filename: "a\r\nSet-Cookie: x=1") == "inline; filename=\"aSet-Cookie_ x=1.webp\"")
    }

    @Test func optionsParseOutsideTheCanonicalForm() throws {
        let r = try SpecParser().parse("/w:10/fn:my:na%20me/att:1/a.jpg")
        #expect(r.download == DownloadOptions(filename: "my:na me", attachment: true))
        #expect(r.canonical == "rs:10:0:fit/-/a.jpg")
        #expect(try SpecParser().parse("/filename:x/attachment:0/a.jpg").download == DownloadOptions(filename: "x"))
        #expect(throws: SpecError.self) { try SpecParser().parse("/fn:/a.jpg") }
        #expect(throws: SpecError.self) { try SpecParser().parse("/att:2/a.jpg") }
        #expect(throws: SpecError.self) { try SpecParser().parse("/fn:%FF%FE/a.jpg") }
    }

    @Test func corsPolicy() {
        #expect(CORSPolicy.parse("") == [])
        #expect(CORSPolicy.parse("*") == ["*"])
        #expect(CORSPolicy.parse("https://a.example, http://localhost:8080") == ["https://a.example", "http://localhost:8080"])
        for bad in ["*,https://a.example", "a.example", "https://a.example/", "https://a.example:x", "https://a_b", "https://", "https://a.example:1:2"] {
            #expect(CORSPolicy.parse(bad) == nil, "\(bad)")
        }
        #expect(CORSPolicy(allowOrigin: []).headers(origin: "https://a.example") == (nil, false))
        #expect(CORSPolicy(allowOrigin: ["*"]).headers(origin: nil) == ("*", false))
        let list = CORSPolicy(allowOrigin: ["https://a.example"])
        #expect(list.headers(origin: "https://a.example") == ("https://a.example", true))
        #expect(list.headers(origin: "https://A.example") == (nil, true))
        #expect(list.headers(origin: "https://a.example.evil") == (nil, true))
        #expect(list.headers(origin: nil) == (nil, true))
        var r = HTTPResponse(status: 200, headers: [(HeaderName.vary, "Accept")])
        list.apply(to: &r, origin: "https://a.example")
        #expect(r.headers.filter { $0.0 == HeaderName.vary }.map(\.1) == ["Accept, Origin"])
    }
}
