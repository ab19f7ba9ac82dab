import Testing
@testable import KilnHTTP

@Suite struct HTTPMappingTests {
    /// A front server that cut DOCUMENT_URI at a decoded NUL (libfcgi's C strings did) would
    /// hide it: a `%00` in the raw path makes the raw URI the one parsed (and refused).
    @Test func encodedNULInTheRawPathIsParsedRaw() {
        let nul = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:100/photo.jpg%00.png", "DOCUMENT_URI": "/w:100/photo.jpg"])
        #expect(nul.specPath.path == "/w:100/photo.jpg%00.png")
        #expect(nul.specPath.isDecoded == false)
        let query = HTTPRequest(fastCGIParams: ["REQUEST_URI": "/w:100/photo.jpg?x=%00", "DOCUMENT_URI": "/w:100/photo.jpg"])
        #expect(query.specPath.path == "/w:100/photo.jpg")
        #expect(query.specPath.isDecoded)
        #expect(HTTPRequest.pathHasEncodedNUL("/a%000b") && !HTTPRequest.pathHasEncodedNUL("/a%100b"))
    }

    @Test func requestFromFastCGIParams() {
        let r = HTTPRequest(fastCGIParams: [
            "REQUEST_METHOD": "HEAD", "REQUEST_URI": "/w_100/a%20b.jpg?x=1", "DOCUMENT_URI": "/w_100/a b.jpg",
            "REMOTE_ADDR": "10.0.0.7", "HTTP_ACCEPT": "image/webp,*/*", "HTTP_IF_NONE_MATCH": "\"abc\"",
            "HTTP_X_FORWARDED_FOR": "1.2.3.4", "CONTENT_TYPE": "", "QUERY_STRING": "x=1", "HTTPS": "on",
        ])
        #expect(r.method == "HEAD")
        #expect(r.uri == "/w_100/a%20b.jpg?x=1")
        #expect(r.remoteAddress == "10.0.0.7")
        #expect(r.headers == ["accept": "image/webp,*/*", "if-none-match": "\"abc\"", "x-forwarded-for": "1.2.3.4"])
    }

    @Test func requestDefaults() {
        let r = HTTPRequest(fastCGIParams: [:])
        #expect(r.method == "GET" && r.uri == "/" && r.headers.isEmpty && r.remoteAddress == "")
        #expect(HTTPRequest(fastCGIParams: ["DOCUMENT_URI": "/x.png"]).uri == "/x.png")
    }

    @Test func cgiHead() {
        let r = HTTPResponse(status: 404, headers: [("Content-Type", "text/plain"), ("Content-Length", "3")], body: Array("no\n".utf8))
        #expect(r.cgiHead == "Status: 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\n")
        #expect(HTTPResponse(status: 200).cgiHead == "Status: 200 OK\r\n\r\n")
        #expect(HTTPResponse(status: 304).cgiHead.hasPrefix("Status: 304 Not Modified\r\n"))
        #expect(r.header("content-type") == "text/plain")
    }
}
