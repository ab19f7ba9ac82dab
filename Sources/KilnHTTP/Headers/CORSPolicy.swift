/// `Access-Control-Allow-Origin` (`http.allow_origin`), so pages on other origins may read the
/// pixels (canvas, WebGL) of images they load with `crossorigin`: `*` for everyone, or a list of
/// origins matched exactly against the request's `Origin`, answered with that origin and
/// `Vary: Origin` (sent whatever the request's origin, so a shared cache never hands one origin's
/// answer to another). Off when empty. Every answer carries it (images, 304s, errors: a page
/// reading a failed image sees the status rather than a CORS error).
///
/// Images need no preflight (a plain GET), so there is no `OPTIONS` answer.
public struct CORSPolicy: Sendable, Equatable {
    /// `["*"]`, a list of origins, or empty.
    public var allowOrigin: [String]

    public init(allowOrigin: [String]) {
        self.allowOrigin = allowOrigin
    }

    /// The headers for a request with this `Origin` (nil: none sent); `varies` tells whether a
    /// `Vary: Origin` is due (added to the answer's `Vary`).
    public func headers(origin: String?) -> (allow: String?, varies: Bool) {
        guard !allowOrigin.isEmpty else { return (nil, false) }
        if allowOrigin == ["*"] { return ("*", false) }
        guard let origin, allowOrigin.contains(origin) else { return (nil, true) }
        return (origin, true)
    }

    /// Adds the headers to `response`, `Origin` appended to an existing `Vary`.
    public func apply(to response: inout HTTPResponse, origin: String?) {
        let (allow, varies) = headers(origin: origin)
        if let allow { response.headers.append((HeaderName.accessControlAllowOrigin, allow)) }
        guard varies else { return }
        if let i = response.headers.firstIndex(where: { $0.0 == HeaderName.vary }) {
            response.headers[i].1 += ", Origin"
        } else {
            response.headers.append((HeaderName.vary, "Origin"))
        }
    }

    /// `*`, or origins (`https://example.com`, `http://localhost:8080`: a scheme, `://`, a host of
    /// letters, digits, `-` and `.`, an optional port, nothing after) separated by commas; nil
    /// for anything else, and for `*` beside origins.
    public static func parse(_ raw: String) -> [String]? {
        var out: [String] = []
        for part in raw.split(separator: ",") {
            let entry = String(part.filter { $0 != " " && $0 != "\t" })
            if entry.isEmpty { continue }
            guard entry == "*" || isOrigin(entry) else { return nil }
            out.append(entry)
        }
        if out.contains("*"), out.count > 1 { return nil }
        return out
    }

    static func isOrigin(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        // `https:`, ``, `host[:port]`: exactly `scheme://authority`, nothing after.
        guard parts.count == 3, parts[1].isEmpty, let scheme = parts[0].split(separator: ":", omittingEmptySubsequences: false).first,
              parts[0] == scheme + ":", !scheme.isEmpty, scheme.allSatisfy(isSchemeCharacter) else { return false }
        let authority = parts[2].split(separator: ":", omittingEmptySubsequences: false)
        guard authority.count <= 2, let host = authority.first, !host.isEmpty, host.allSatisfy(isHostCharacter) else { return false }
        if authority.count == 2 {
            let port = authority[1]
            guard (1...5).contains(port.count), port.allSatisfy(isDigit) else { return false }
        }
        return true
    }

    static func isDigit(_ c: Character) -> Bool { c >= "0" && c <= "9" }
    static func isLetter(_ c: Character) -> Bool { (c >= "a" && c <= "z") || (c >= "A" && c <= "Z") }
    static func isSchemeCharacter(_ c: Character) -> Bool { isLetter(c) || isDigit(c) || c == "+" || c == "-" || c == "." }
    static func isHostCharacter(_ c: Character) -> Bool { isLetter(c) || isDigit(c) || c == "-" || c == "." }
}
