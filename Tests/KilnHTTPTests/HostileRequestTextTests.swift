import Testing
import KilnModel
import KilnPipeline
@testable import KilnHTTP

/// The HTTP layer's small holes (one-line error bodies, paths that are not
/// UTF-8, the 415 sentence, signatures kept off the status page).
@Suite struct HostileRequestTextTests {
    @Test func controlCharactersAreEscapedIntoOneLine() {
        #expect(OneLineText.escaped("no such file 'a.jpg'") == "no such file 'a.jpg'")
        #expect(OneLineText.escaped("a\r\nb\tc") == "a\\r\\nb\\tc")
        #expect(OneLineText.escaped("x\u{1b}[31m\u{7f}\u{85}\u{2028}\u{2029}y\u{0}") == "x\\u001b[31m\\u007f\\u0085\\u2028\\u2029y\\u0000")
        // Other non-ASCII text stays as it is.
        #expect(OneLineText.escaped("café \u{FFFD} 東京") == "café \u{FFFD} 東京")
        let hostile = (0..<0x20).map { Character(Unicode.Scalar(UInt8($0))) }.map(String.init).joined()
        let escaped = OneLineText.escaped(hostile)
        #expect(!escaped.unicodeScalars.contains { $0.value < 0x20 })
    }

    /// `%FE` and `%FF` both read as U+FFFD: one path, one cache key for two URLs. The FastCGI
    /// reader keeps the bytes of such a value and the request says its path is not UTF-8.
    @Test func aPathThatIsNotUTF8IsRefused() throws {
        let docBytes: [UInt8] = Array("/w:10/a".utf8) + [0xFF] + Array(".jpg".utf8)
        let decoded = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:10/a%FF.jpg", "DOCUMENT_URI": "/w:10/a\u{FFFD}.jpg"],
                                  nonUTF8: ["DOCUMENT_URI": docBytes])
        #expect(!decoded.pathIsUTF8)
        // Raw bytes in the request target's path, and in its query only (not Kiln's business).
        let rawPath = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:10/a\u{FFFD}.jpg"],
                                  nonUTF8: ["REQUEST_URI": Array("/w:10/a".utf8) + [0xFE] + Array(".jpg".utf8)])
        #expect(!rawPath.pathIsUTF8)
        let rawQuery = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:10/a.jpg?q=\u{FFFD}"],
                                   nonUTF8: ["REQUEST_URI": Array("/w:10/a.jpg?q=".utf8) + [0xFE]])
        #expect(rawQuery.pathIsUTF8)
        #expect(HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:10/caf%C3%A9.jpg", "DOCUMENT_URI": "/w:10/café.jpg"]).pathIsUTF8)

        let gate = RequestGate(parser: SpecParser())
        #expect(throws: SpecError.notUTF8) { try gate.admit(decoded) }
        #expect(throws: SpecError.notUTF8) { try gate.admit(rawPath) }
        // The raw path decoded by Kiln (with signing keys, or without nginx) says the same.
        #expect(throws: SpecError.notUTF8) { try gate.admit(HTTPRequest(method: "GET", uri: "/w:10/a%FF.jpg")) }
        let mapped = ErrorMapping.map(SpecError.notUTF8)
        #expect(mapped.status == 400 && mapped.message == "the path is not valid UTF-8 (after percent-decoding)")
    }

    @Test func the415MessageIsASentence() {
        let m = ErrorMapping.map(PipelineError.unsupportedType("text/plain"))
        #expect(m.status == 415)
        #expect(m.message == "not a supported image (content is text/plain): Kiln reads JPEG, PNG, WebP, GIF, AVIF, HEIC, SVG, TIFF, BMP, ICO and JPEG XL images")
        #expect(!m.message.hasSuffix(" are"))
    }

    @Test func signaturesAreRedactedForTheStatusPage() {
        let key = SigningKey(key: Array(repeating: 7, count: 32), salt: Array(repeating: 9, count: 16))
        let signing = URLSignature(keys: [key])
        let path = "/rs:300:200:fill/photos/cat.jpg"
        let signed = signing.sign(path)!
        let signature = String(signed.dropFirst().prefix { $0 != "/" })
        #expect(signing.redacted(signed) == "/<signature>" + path)
        #expect(signing.redacted(signed + "?x=1") == "/<signature>" + path + "?x=1")
        #expect(!signing.redacted(signed).contains(signature))
        // What is not a signature stays: unsafe, an option, a short segment, no keys at all.
        #expect(signing.redacted("/unsafe" + path) == "/unsafe" + path)
        #expect(signing.redacted(path) == path)
        #expect(signing.redacted("/thumb/300x200/cat.jpg") == "/thumb/300x200/cat.jpg")
        #expect(URLSignature().redacted(signed) == signed)
        // A truncated signature (security.signature_size = 8) is found by its size.
        let short = URLSignature(keys: [key], size: 8)
        let shortSigned = short.sign(path)!
        #expect(short.redacted(shortSigned) == "/<signature>" + path)
        #expect(signing.redacted(shortSigned) == shortSigned)
    }
}
