import KilnModel

/// Request ids: nginx's `$request_id` (32 hex digits, passed as the FastCGI param
/// `KILN_REQUEST_ID`), a client's `X-Request-Id` when `log.trust_request_id` is on, or one Kiln
/// makes. Whatever the source, only ids of 1 to 128 characters from `A-Z a-z 0-9 . _ : -` are
/// taken (they go into a response header and log lines); others are ignored.
public enum RequestID {
    /// The FastCGI param nginx sets to `$request_id`.
    public static let param = "KILN_REQUEST_ID"

    /// The id of a request: the client's `X-Request-Id` header if `trustHeader` and valid, else
    /// the web server's param if valid, else a new one.
    public static func resolve(_ request: HTTPRequest, trustHeader: Bool) -> String {
        if trustHeader, let h = request.headers[HeaderName.Request.xRequestID], isValid(h) { return h }
        if let p = request.requestIDParam, isValid(p) { return p }
        return generate()
    }

    /// 16 hex digits from the system's random source (getrandom).
    public static func generate() -> String {
        var rng = SystemRandomNumberGenerator()
        return Hex.lowercase(words: [rng.next() as UInt64])
    }

    public static func isValid(_ id: String) -> Bool {
        guard (1...128).contains(id.utf8.count) else { return false }
        return id.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5A) || (c >= 0x61 && c <= 0x7A)
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c == UInt8(ascii: "-")
        }
    }
}
