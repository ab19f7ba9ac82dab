/// A remote source (`source.origins`): URLs whose path starts with `name/` read from `baseURL`.
/// `origin-a=http://images.internal:8080/originals/` makes `/rs:300:300/origin-a/cat.jpg` fetch
/// `http://images.internal:8080/originals/cat.jpg`.
public struct Origin: Sendable, Equatable, CustomStringConvertible {
    /// The first path segment that selects it: letters, digits, `-`, `_`, `.`.
    public var name: String
    /// `http://` or `https://`, a host, maybe a port and a path; always ends with `/`.
    public var baseURL: String

    public init?(name: String, baseURL: String) {
        guard Origin.isValidName(name), let base = Origin.normalizedBase(baseURL) else { return nil }
        self.name = name
        self.baseURL = base
    }

    public var description: String { "\(name)=\(baseURL)" }

    /// The URL of `path` (relative to the origin, already free of `.`/`..` segments): each
    /// segment percent-encoded, so a name with spaces, `?` or `#` stays a path.
    public func url(for path: String) -> String {
        baseURL + path.split(separator: "/", omittingEmptySubsequences: false).map { Origin.percentEncoded($0) }.joined(separator: "/")
    }

    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.count <= 64 && name != "." && name != ".."
            && name.utf8.allSatisfy { c in
                (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || c == 0x2d || c == 0x5f || c == 0x2e
            }
    }

    static func normalizedBase(_ raw: String) -> String? {
        let lower = raw.lowercased()
        let scheme: String
        if lower.hasPrefix("http://") { scheme = "http://" } else if lower.hasPrefix("https://") { scheme = "https://" } else { return nil }
        let rest = raw.dropFirst(scheme.count)
        let host = rest.prefix { $0 != "/" }
        guard !host.isEmpty, !host.contains("@"), !raw.contains("?"), !raw.contains("#"),
              raw.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else { return nil }
        return raw.hasSuffix("/") ? raw : raw + "/"
    }

    /// RFC 3986 unreserved characters, sub-delimiters, `:` and `@` stay; every other byte is `%XX`.
    static func percentEncoded(_ segment: Substring) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(segment.utf8.count)
        for byte in segment.utf8 {
            if isPathByte(byte) {
                out.append(byte)
            } else {
                out += [0x25, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)
    private static let pathPunctuation = Set("-._~!$&'()*+,;=:@".utf8)

    private static func isPathByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a) || pathPunctuation.contains(b)
    }

    /// `a=http://x/, b=https://y/img` (commas or spaces between entries) to origins; nil when an
    /// entry is malformed or a name repeats. Empty text is no origin.
    public static func parseList(_ raw: String) -> [Origin]? {
        var out: [Origin] = []
        for part in raw.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            guard let eq = part.firstIndex(of: "="),
                  let origin = Origin(name: String(part[..<eq]), baseURL: String(part[part.index(after: eq)...])),
                  !out.contains(where: { $0.name == origin.name }) else { return nil }
            out.append(origin)
        }
        return out
    }

    public static func formatList(_ list: [Origin]) -> String {
        list.map(\.description).joined(separator: ",")
    }
}
