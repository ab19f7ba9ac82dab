import KilnModel
import KilnPipeline

/// A remote source (`source.origins`): URLs whose path starts with `name/` read from `baseURL`.
/// `origin-a=http://images.internal:8080/originals/` makes `/rs:300:300/origin-a/cat.jpg` fetch
/// `http://images.internal:8080/originals/cat.jpg`.
///
/// An S3 origin, `media=s3://bucket/optional/prefix/`, reads objects of a bucket with signed GETs
/// (`S3RequestSigner`); `addressed(at:)` gives the path-style URL at an endpoint
/// (`source.s3_endpoint`): `/rs:300:300/media/cat.jpg` fetches
/// `<endpoint>/bucket/optional/prefix/cat.jpg`.
public struct Origin: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// An HTTP(S) server, read with plain GETs.
        case http
        /// An S3 bucket (or an S3-compatible store), read with SigV4-signed GETs.
        case s3
    }

    /// The first path segment that selects it: letters, digits, `-`, `_`, `.`.
    public var name: String
    /// `http://` or `https://`, a host, maybe a port and a path; or `s3://bucket/` and a key
    /// prefix. Always ends with `/`.
    public var baseURL: String
    public var kind: Kind

    public init?(name: String, baseURL: String) {
        guard Origin.isValidName(name) else { return nil }
        if baseURL.lowercased().hasPrefix(Origin.s3Scheme) {
            guard let base = Origin.normalizedS3Base(baseURL) else { return nil }
            self.kind = .s3
            self.baseURL = base
        } else {
            guard let base = Origin.normalizedBase(baseURL) else { return nil }
            self.kind = .http
            self.baseURL = base
        }
        self.name = name
    }

    public var description: String { "\(name)=\(baseURL)" }

    /// The URL of `path` (relative to the origin, already free of `.`/`..` segments): each
    /// segment percent-encoded, so a name with spaces, `?` or `#` stays a path.
    /// An S3 origin's keys are encoded as SigV4 signs them: every byte but `A-Za-z0-9-._~` and `/`.
    public func url(for path: String) -> String {
        if kind == .s3 { return baseURL + S3RequestSigner.encodePath(path) }
        return baseURL + path.split(separator: "/", omittingEmptySubsequences: false).map { Origin.percentEncoded($0) }.joined(separator: "/")
    }

    /// An S3 origin's bucket (nil for HTTP origins).
    public var bucket: String? {
        guard kind == .s3, baseURL.hasPrefix(Origin.s3Scheme) else { return nil }
        return String(baseURL.dropFirst(Origin.s3Scheme.count).prefix { $0 != "/" })
    }

    /// The S3 origin at `endpoint` (`http(s)://host[:port]`, maybe a path, no trailing `/`), with
    /// path-style addressing: its base URL becomes `endpoint/bucket/prefix/` (the prefix
    /// URI-encoded). HTTP origins, and an S3 origin already addressed, stay as they are.
    public func addressed(at endpoint: String) -> Origin {
        guard kind == .s3, let bucket else { return self }
        var copy = self
        let prefix = baseURL.dropFirst(Origin.s3Scheme.count + bucket.count + 1)
        copy.baseURL = endpoint + "/" + bucket + "/" + S3RequestSigner.encodePath(prefix)
        return copy
    }

    static let s3Scheme = "s3://"

    /// `s3://bucket[/prefix]`: a bucket name of 3 to 63 lower-case letters, digits, `.`, `-` and
    /// `_`, starting and ending with a letter or digit; a prefix of printable ASCII (no `?`, `#`
    /// or `\`; no `.` or `..` segment), used as is (not percent-decoded). Ends with `/`.
    static func normalizedS3Base(_ raw: String) -> String? {
        let rest = raw.dropFirst(s3Scheme.count)
        let bucket = rest.prefix { $0 != "/" }
        let prefix = rest.dropFirst(bucket.count).drop { $0 == "/" }
        let bucketBytes = Array(bucket.utf8)
        guard (3...63).contains(bucketBytes.count),
              bucketBytes.allSatisfy({ isLowerAlphanumeric($0) || $0 == 0x2e || $0 == 0x2d || $0 == 0x5f }),
              let first = bucketBytes.first, let last = bucketBytes.last,
              isLowerAlphanumeric(first), isLowerAlphanumeric(last),
              prefix.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f && $0 != 0x3f && $0 != 0x23 && $0 != 0x5c }),
              !prefix.split(separator: "/").contains(where: { $0 == "." || $0 == ".." }) else { return nil }
        let base = s3Scheme + bucket + "/" + prefix
        return base.hasSuffix("/") ? base : base + "/"
    }

    private static func isLowerAlphanumeric(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a)
    }

    /// `source.s3_endpoint`: empty, or `http(s)://host[:port]` and maybe a path; nil otherwise.
    /// The scheme and host are lower-cased (the `Host` header is signed as curl sends it) and a
    /// trailing `/` dropped.
    public static func normalizedEndpoint(_ raw: String) -> String? {
        if raw.isEmpty { return raw }
        guard var base = normalizedBase(raw) else { return nil }
        base.removeLast()
        let scheme = base.prefix { $0 != ":" } + "://"
        let rest = base.dropFirst(scheme.count)
        let host = rest.prefix { $0 != "/" }
        return scheme.lowercased() + host.lowercased() + rest.dropFirst(host.count)
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
        PercentEncoding.encode(segment, keeping: .pathSegment)
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
