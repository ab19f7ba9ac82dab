import KilnModel

/// A remote origin as the adapters see it (`source.origins`): an absolute source URL under
/// `baseURL` reads `<name>/<rest>`, exactly the source path a native URL would name.
public struct AdapterOrigin: Sendable, Equatable {
    public var name: String
    /// `http(s)://host[:port]/path/`, as `Origin` normalised it (ends with `/`).
    public var baseURL: String

    public init(name: String, baseURL: String) {
        self.name = name
        self.baseURL = baseURL
    }
}

/// Turns the source a foreign URL names into Kiln's source path: a local path
/// (`/photos/cat.jpg` → `photos/cat.jpg`), or an absolute `http(s)` URL under a configured origin
/// (`https://img.example.com/originals/cat.jpg` → `photos/cat.jpg` for
/// `photos=https://img.example.com/originals/`). Any other absolute URL is refused, never fetched.
enum AdaptedSource {
    /// `reference` is percent-encoded as in a URL (each path segment is decoded here).
    static func resolve(_ reference: String, origins: [AdapterOrigin], adapter: String, what: String) throws(AdapterError) -> String {
        let shown = String(reference.prefix(100))
        if reference.contains("?") || reference.contains("#") {
            throw AdapterError(adapter, "\(what) '\(shown)' has a query or fragment; Kiln's sources have none")
        }
        if isRooted(reference) && !reference.unicodeScalars.dropFirst().starts(with: "/".unicodeScalars) {
            return try decodedPath(Substring(reference.unicodeScalars.dropFirst()), adapter: adapter, what: what, shown: shown)
        }
        guard let schemeEnd = reference.firstRange(of: "://"),
              ["http", "https"].contains(reference[..<schemeEnd.lowerBound].lowercased()) else {
            throw AdapterError(adapter, "\(what) '\(shown)' must be a path starting with / or an http(s) URL of a configured origin")
        }
        let afterScheme = reference[schemeEnd.upperBound...]
        let authority = afterScheme.prefix { $0 != "/" }
        let normalized = reference[..<schemeEnd.upperBound].lowercased() + authority.lowercased() + afterScheme.dropFirst(authority.count)
        for origin in origins where normalized.hasPrefix(origin.baseURL) {
            let rest = normalized.dropFirst(origin.baseURL.count)
            return origin.name + "/" + (try decodedPath(rest, adapter: adapter, what: what, shown: shown))
        }
        throw AdapterError(adapter, "\(what) '\(shown)' is not under a configured origin (source.origins); Kiln fetches nothing else")
    }

    /// Whether `path` starts with `/`, by scalars (`/` and a combining mark are one Character).
    static func isRooted(_ path: some StringProtocol) -> Bool {
        path.unicodeScalars.first == "/"
    }

    /// Each segment percent-decoded on its own; empty segments dropped; an encoded `/` refused.
    static func decodedPath(_ raw: Substring, adapter: String, what: String, shown: String) throws(AdapterError) -> String {
        var parts: [String] = []
        for segment in raw.unicodeScalars.split(separator: "/").map({ Substring($0) }) {
            let decoded: String
            do throws(SpecError) {
                decoded = try PathDecoding.decodeSegment(segment)
            } catch {
                throw AdapterError(adapter, "\(what) '\(shown)': bad percent-encoding, NUL or not UTF-8")
            }
            guard !decoded.unicodeScalars.contains("/") else { throw AdapterError(adapter, "\(what) '\(shown)': encoded slash in the path") }
            parts.append(decoded)
        }
        guard !parts.isEmpty else { throw AdapterError(adapter, "\(what) names no source image") }
        return parts.joined(separator: "/")
    }

    /// A foreign width, height and fit as Kiln's resize: `rs:<w>:<h>:<mode>` with both sizes,
    /// `w:`/`h:` with one, then `el:1` when the foreign mode enlarges; nothing without a size (a fit
    /// without one is refused: it would change nothing). `sizes` names the parameters for messages.
    static func resize(width w: Int?, height h: Int?, mode: String, enlarge: Bool, fitGiven: Bool,
                       adapter: String, sizes: String) throws(AdapterError) -> [String] {
        var options: [String]
        switch (w, h) {
        case (nil, nil):
            guard !fitGiven else { throw AdapterError(adapter, "fit needs \(sizes)") }
            return []
        case let (w?, h?): options = ["rs:\(w):\(h):\(mode)"]
        case let (w?, nil): options = ["w:\(w)"]
        case let (nil, h?): options = ["h:\(h)"]
        }
        if enlarge { options.append("el:1") }
        return options
    }

    /// A whole number of decimal digits (at most 6) in `range`, for sizes and qualities: no sign,
    /// no exponent, no fraction, so nothing but digits ever reaches a native option.
    static func integer(_ value: String, _ name: String, _ range: ClosedRange<Int>, adapter: String) throws(AdapterError) -> Int {
        guard (1...6).contains(value.utf8.count), value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), let n = Int(value),
              range.contains(n) else {
            throw AdapterError(adapter, "\(name)=\(value.prefix(20)) must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return n
    }

    /// A plain decimal (`2`, `1.5`, `0.25`; at most 8 characters) in `range`, kept as written.
    static func decimal(_ value: String, _ name: String, _ range: ClosedRange<Double>, adapter: String) throws(AdapterError) -> String {
        let digits = value.utf8.filter { $0 != UInt8(ascii: ".") }
        guard (1...8).contains(value.utf8.count), !digits.isEmpty, value.utf8.count - digits.count <= 1,
              digits.allSatisfy({ $0 >= 48 && $0 <= 57 }), value.first != ".", value.last != ".",
              let d = Double(value), range.contains(d) else {
            throw AdapterError(adapter, "\(name)=\(value.prefix(20)) must be a number in \(formatted(range.lowerBound))...\(formatted(range.upperBound))")
        }
        return value
    }

    /// `2` for 2.0, `2.5` for 2.5: the spelling of a converted sigma.
    static func formatted(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e9 ? String(Int(d)) : String(d)
    }

    /// Six hex digits from `#rgb`, `#rrggbb` (also without `#`); nil otherwise.
    static func hexColor(_ value: String) -> String? {
        let hex = value.hasPrefix("#") ? value.dropFirst() : Substring(value)
        guard hex.allSatisfy(\.isHexDigit) else { return nil }
        switch hex.count {
        case 3: return hex.map { "\($0)\($0)" }.joined().lowercased()
        case 6: return hex.lowercased()
        default: return nil
        }
    }
}
