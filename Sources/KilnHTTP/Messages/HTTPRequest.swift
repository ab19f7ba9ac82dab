/// The parts of an HTTP request Kiln uses, built from FastCGI params (or by tests).
public struct HTTPRequest: Sendable, Equatable {
    /// `GET`, `HEAD`, ...
    public var method: String
    /// The raw request target as the client sent it (FastCGI `REQUEST_URI`): still
    /// percent-encoded, query string included.
    public var uri: String
    /// Header names in lower case (`accept`, `if-none-match`, `if-modified-since`, ...).
    public var headers: [String: String]
    public var remoteAddress: String
    /// The path nginx resolved (FastCGI `DOCUMENT_URI`: percent-decoded, dot segments and
    /// duplicate slashes resolved, rewrites applied), nil when not behind nginx.
    public var documentURI: String?
    /// nginx marked the request trusted (`fastcgi_param KILN_TRUSTED 1` in an internal rewrite
    /// location): no signature, no presets-only check, `DOCUMENT_URI` parsed. Only the param of
    /// that exact name counts; a client's `Kiln-Trusted` header arrives as `HTTP_KILN_TRUSTED`.
    public var isTrusted: Bool
    /// The web server's request id (FastCGI param `KILN_REQUEST_ID`, nginx's `$request_id`), if
    /// it passed one; `RequestID.resolve` decides the id the request is logged and answered with.
    public var requestIDParam: String?
    /// False when the path's bytes (`DOCUMENT_URI`, or `REQUEST_URI` up to `?`) are not valid
    /// UTF-8: the Strings hold U+FFFD there, which two different paths would share, so such a
    /// request is refused (400) before anything is looked up.
    public var pathIsUTF8: Bool
    /// The worker records a trace of this request (`[tracing]`, sampled): handlers fill
    /// `HTTPResponse.traceFacts` only then. Set by the responder, never from the request.
    public var isTraced = false

    /// The FastCGI param nginx sets to `1` for trusted requests.
    public static let trustedParam = "KILN_TRUSTED"

    public init(method: String, uri: String, headers: [String: String] = [:], remoteAddress: String = "",
                documentURI: String? = nil, isTrusted: Bool = false, requestIDParam: String? = nil, pathIsUTF8: Bool = true) {
        self.method = method
        self.uri = uri
        self.headers = headers
        self.remoteAddress = remoteAddress
        self.documentURI = documentURI
        self.isTrusted = isTrusted
        self.requestIDParam = requestIDParam
        self.pathIsUTF8 = pathIsUTF8
    }

    /// The raw path of the request target: `uri` up to `?` (still percent-encoded). This is what
    /// a URL signature covers.
    public var rawPath: String {
        String(uri.prefix { $0 != "?" })
    }

    /// The path to parse and whether it is already percent-decoded: `DOCUMENT_URI` when nginx
    /// gave it (so `rewrite ... last` rules such as `/thumb/WxH/...` work), else the raw URI.
    /// A NUL reaches `DOCUMENT_URI` intact (Kiln's FastCGI reader keeps param bytes as they are)
    /// and the parser refuses it (400); a front server that cut the decoded path at the NUL would
    /// hide it, so when the raw path holds `%00` the raw URI is parsed instead, refused the same way.
    public var specPath: (path: String, isDecoded: Bool) {
        if let d = documentURI, !d.isEmpty, !HTTPRequest.pathHasEncodedNUL(uri) { return (d, true) }
        return (uri, false)
    }

    /// Whether the path part of a raw request target (before `?`/`#`) holds `%00`.
    static func pathHasEncodedNUL(_ uri: String) -> Bool {
        let path = uri.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        var it = path.makeIterator()
        while let c = it.next() {
            guard c == UInt8(ascii: "%") else { continue }
            if it.next() == UInt8(ascii: "0"), it.next() == UInt8(ascii: "0") { return true }
        }
        return false
    }

    /// Builds a request from FastCGI params: `REQUEST_METHOD`, `REQUEST_URI`, `REMOTE_ADDR`,
    /// `KILN_TRUSTED`, `KILN_REQUEST_ID`, and
    /// every `HTTP_*` param as a header (`HTTP_IF_NONE_MATCH` becomes `if-none-match`).
    /// `nonUTF8`: the bytes of the params that are not valid UTF-8 (`FastCGIRequest.nonUTF8Params`).
    public init(fastCGIParams params: [String: String], nonUTF8: [String: [UInt8]] = [:]) {
        var headers: [String: String] = [:]
        for (k, v) in params where k.hasPrefix("HTTP_") {
            headers[k.dropFirst(5).lowercased().replacingOccurrences(of: "_", with: "-")] = v
        }
        self.init(method: params["REQUEST_METHOD"] ?? "GET",
                  uri: params["REQUEST_URI"] ?? params["DOCUMENT_URI"] ?? "/",
                  headers: headers,
                  remoteAddress: params["REMOTE_ADDR"] ?? "",
                  documentURI: params["DOCUMENT_URI"],
                  isTrusted: params[HTTPRequest.trustedParam] == "1",
                  requestIDParam: params[RequestID.param],
                  pathIsUTF8: HTTPRequest.pathIsUTF8(nonUTF8))
    }

    /// Whether the path params are valid UTF-8: `DOCUMENT_URI` whole, `REQUEST_URI` up to `?` (its
    /// query is not Kiln's).
    static func pathIsUTF8(_ nonUTF8: [String: [UInt8]]) -> Bool {
        if nonUTF8["DOCUMENT_URI"] != nil { return false }
        guard let raw = nonUTF8["REQUEST_URI"] else { return true }
        return String(validating: raw.prefix { $0 != UInt8(ascii: "?") }, as: UTF8.self) != nil
    }
}

extension String {
    /// Every `target` character replaced by `replacement` (no Foundation). Only characters: the
    /// callers (header names here, `KILN_` variable names in `ConfigurationLoader`) swap one
    /// character for another.
    func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
