import Testing
import KilnModel
@testable import KilnHTTP
@testable import KilnServer

/// Issue 25, item 6, through the real image handler: a 304 for `If-Modified-Since` carries what
/// the 200 would (ETag, Last-Modified, Cache-Control), an `If-Modified-Since` later than now is
/// ignored (RFC 9110 §13.1.3), and an error body quoting a hostile path stays one line.
@Suite struct ConditionalRequestTests {
    @Test func ifModifiedSinceAnswersWithTheVariantsHeaders() throws {
        let folder = try ImageFolder("ims")
        defer { folder.remove() }
        let handler = try HandlerFactory().makeImageHandler(folder.configuration, quietLogger)
        let full = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        let etag = try #require(full.header("ETag"))
        let lastModified = try #require(full.header("Last-Modified"))
        #expect(full.status == 200)

        let notModified = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png", headers: ["if-modified-since": lastModified]))
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(notModified.header("ETag") == etag)
        #expect(notModified.header("Last-Modified") == lastModified)
        #expect(notModified.header("Cache-Control") == full.header("Cache-Control") && full.header("Cache-Control") != nil)
        #expect(notModified.header("Content-Type") == nil && notModified.header("Content-Length") == nil)

        // Not yet modified at a date in the past: the whole image.
        let old = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png", headers: ["if-modified-since": "Mon, 01 Jan 1990 00:00:00 GMT"]))
        #expect(old.status == 200 && old.body == full.body)
        // A date this server has not reached is no validator of its own: ignored, 200.
        let future = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png", headers: ["if-modified-since": "Fri, 01 Jan 2100 00:00:00 GMT"]))
        #expect(future.status == 200 && future.body == full.body)
        // If-None-Match wins over If-Modified-Since.
        let other = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png",
                                               headers: ["if-modified-since": lastModified, "if-none-match": "\"other\""]))
        #expect(other.status == 200)
    }

    @Test func errorBodiesAreOneLine() throws {
        let folder = try ImageFolder("oneline")
        defer { folder.remove() }
        let handler = try HandlerFactory().makeImageHandler(folder.configuration, quietLogger)
        for request in [HTTPRequest(method: "GET", uri: "/w:4/a%0D%0AX-Injected:%201%1B.png"),
                        HTTPRequest(method: "GET", uri: "/w:4/a%0D%0AX-Injected:%201%1B.png",
                                    documentURI: "/w:4/a\r\nX-Injected: 1\u{1b}.png")] {
            let r = handler.handle(request)
            #expect(r.status == 404)
            let text = String(decoding: r.body, as: UTF8.self)
            #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" || $0 == "\r\n" }.count == 1, "\(text.debugDescription)")
            #expect(!text.unicodeScalars.dropLast().contains { $0.value < 0x20 }, "\(text.debugDescription)")
            #expect(text.contains("a\\r\\nX-Injected: 1\\u001b.png"), "\(text.debugDescription)")
            #expect(r.header("Content-Length") == String(r.body.count))
        }
    }
}
