import Crypto
import KilnModel

/// One signing key and its salt (raw bytes; the configuration writes them in hex).
public struct SigningKey: Sendable, Equatable {
    public var key: [UInt8]
    public var salt: [UInt8]

    public init(key: [UInt8], salt: [UInt8]) {
        self.key = key
        self.salt = salt
    }
}

/// Why a path's signature was refused. Every case is a 403; `message` is the public one-line reason.
public enum SignatureError: Error, Equatable, Sendable {
    /// An unsigned URL while unsigned URLs are off: `unsafe`, a first segment that cannot be a
    /// signature (`w:300`, `cat.jpg`: characters outside URL-safe base64), or without keys any path.
    case unsignedRefused
    /// Nothing after the signature segment, or no segment at all.
    case missing
    /// The first segment is not URL-safe base64 (no padding) of `security.signature_size` bytes.
    case malformed
    /// Well-formed, but no configured key signed this path.
    case mismatch
    /// The raw path does not start with `/` (an absolute-form request target, say).
    case notAPath

    public var message: String {
        switch self {
        case .unsignedRefused: "this server requires signed URLs: /<signature>/<options>/<source path> (docs/security.md)"
        case .missing: "missing signature: expected /<signature>/<options>/<source path>"
        case .malformed: "malformed signature: the first path segment is not a URL-safe base64 signature of the configured size"
        case .mismatch: "invalid signature for this path"
        case .notAPath: "the request target is not an absolute path"
        }
    }
}

/// imgproxy's URL signature: the first path segment is
/// `base64url(HMAC-SHA256(key, salt + rest))` without padding, where `rest` is the raw path from
/// the `/` after that segment, exactly as received (before percent-decoding, without the query),
/// optionally truncated to `size` bytes. Several key/salt pairs may be active at once (rotation):
/// a path signed by any of them passes. Comparison is constant-time and every key is tried.
///
/// The signature is removed only from its own position: everything after it is covered, so the
/// same string elsewhere in the path (thumbor's old bypass) changes `rest` and fails.
public struct URLSignature: Sendable, Equatable {
    /// The first segment of an unsigned URL (imgproxy's `insecure`/`unsafe`).
    public static let unsafeSegment = "unsafe"

    public var keys: [SigningKey]
    /// Bytes of the HMAC kept in the URL, 1...32.
    public var size: Int
    /// Whether `unsafe` (and, without keys, a path with no signature segment) is accepted.
    public var allowUnsigned: Bool

    public init(keys: [SigningKey] = [], size: Int = 32, allowUnsigned: Bool = true) {
        self.keys = keys
        self.size = min(max(size, 1), 32)
        self.allowUnsigned = allowUnsigned
    }

    /// What `verify` found, and the raw path that remains to be parsed.
    public struct VerifiedPath: Equatable, Sendable {
        public enum Kind: Equatable, Sendable {
            /// A valid signature by one of the keys.
            case signed
            /// `unsafe` as the first segment, accepted while unsigned URLs are on.
            case unsafe
            /// No keys configured and no `unsafe` segment: the whole path, as before signing existed.
            case unsigned
        }

        public var kind: Kind
        /// The raw path after the signature segment (starting with `/`), or the whole path for `.unsigned`.
        public var path: String
    }

    /// Checks the raw path (the request target up to `?`, still percent-encoded).
    public func verify(rawPath: String) throws(SignatureError) -> VerifiedPath {
        let utf8 = rawPath.utf8
        guard utf8.first == UInt8(ascii: "/") else { throw .notAPath }
        let afterSlash = utf8.index(after: utf8.startIndex)
        let restStart = utf8[afterSlash...].firstIndex(of: UInt8(ascii: "/")) ?? utf8.endIndex
        let first = rawPath[afterSlash..<restStart]
        let rest = String(rawPath[restStart...])

        if first == URLSignature.unsafeSegment {
            guard allowUnsigned else { throw .unsignedRefused }
            return VerifiedPath(kind: .unsafe, path: rest)
        }
        if keys.isEmpty {
            guard allowUnsigned else { throw .unsignedRefused }
            return VerifiedPath(kind: .unsigned, path: rawPath)
        }
        // A first segment that no signature spells (an option, a file name) is an unsigned URL,
        // not a badly signed one.
        if first.utf8.contains(where: { !Base64URL.isAlphabet($0) }) {
            guard allowUnsigned else { throw .unsignedRefused }
            throw .malformed
        }
        guard !first.isEmpty, !rest.isEmpty else { throw .missing }
        guard let given = Base64URL.decode(first), given.count == size else { throw .malformed }
        let message = Array(rest.utf8)
        var matched: UInt8 = 0
        for k in keys {
            let mac = URLSignature.mac(message: message, key: k)
            matched |= URLSignature.constantTimeEqual(Array(mac.prefix(size)), given)
        }
        guard matched == 1 else { throw .mismatch }
        return VerifiedPath(kind: .signed, path: rest)
    }

    /// What the status page and the master's log lines show of a request target: `uri` with a
    /// signature segment (the first one, when it is URL-safe base64 of `size` bytes and keys are
    /// configured) replaced by `<signature>`. A signature is a bearer credential for its URL: it
    /// is no business of whoever reads the status page (the access log keeps the request as sent,
    /// as nginx's does).
    public func redacted(_ uri: String) -> String {
        guard !keys.isEmpty, uri.utf8.first == UInt8(ascii: "/") else { return uri }
        let afterSlash = uri.utf8.index(after: uri.utf8.startIndex)
        let end = uri.utf8[afterSlash...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") } ?? uri.utf8.endIndex
        let first = uri[afterSlash..<end]
        guard first != URLSignature.unsafeSegment, let bytes = Base64URL.decode(first), bytes.count == size else { return uri }
        return "/" + URLSignature.redactedSegment + String(uri[end...])
    }

    /// What `redacted` puts where a signature was.
    public static let redactedSegment = "<signature>"

    /// `/<signature>` + `path` with the first key (the current one); `path` must start with `/`
    /// and be written exactly as clients will request it (percent-encoded where needed).
    public func sign(_ path: String) -> String? {
        guard let key = keys.first, path.utf8.first == UInt8(ascii: "/") else { return nil }
        return "/" + URLSignature.signature(of: path, key: key, size: size) + path
    }

    /// The signature segment of `rest` for one key.
    public static func signature(of rest: String, key: SigningKey, size: Int = 32) -> String {
        Base64URL.encode(Array(mac(message: Array(rest.utf8), key: key).prefix(min(max(size, 1), 32))))
    }

    static func mac(message: [UInt8], key: SigningKey) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key.key))
        hmac.update(data: key.salt)
        hmac.update(data: message)
        return Array(hmac.finalize())
    }

    /// 1 when equal, else 0; the time depends on the lengths only.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> UInt8 {
        guard a.count == b.count else { return 0 }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0 ? 1 : 0
    }
}

/// URL-safe base64 without padding (RFC 4648 §5), strict: other characters, padding and
/// non-canonical trailing bits are refused, so one signature has one spelling.
public enum Base64URL {
    public static func encode(_ bytes: [UInt8]) -> String {
        Base64.encode(bytes, alphabet: .url, padding: false)
    }

    /// Whether `c` is one of the 64 characters.
    public static func isAlphabet(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    /// The bytes; `canonical: false` accepts nonzero bits below the last whole byte, as encoders
    /// of source URLs (imgproxy's clients) may leave them.
    public static func decode(_ text: some StringProtocol, canonical: Bool = true) -> [UInt8]? {
        var values: [UInt8] = []
        values.reserveCapacity(text.utf8.count)
        for c in text.utf8 {
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): values.append(c - UInt8(ascii: "A"))
            case UInt8(ascii: "a")...UInt8(ascii: "z"): values.append(c - UInt8(ascii: "a") + 26)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): values.append(c - UInt8(ascii: "0") + 52)
            case UInt8(ascii: "-"): values.append(62)
            case UInt8(ascii: "_"): values.append(63)
            default: return nil
            }
        }
        guard values.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(values.count * 3 / 4)
        var i = 0
        while i < values.count {
            let n = min(4, values.count - i)
            let v0 = values[i], v1 = values[i + 1]
            let v2 = n > 2 ? values[i + 2] : 0, v3 = n > 3 ? values[i + 3] : 0
            out.append(v0 << 2 | v1 >> 4)
            if n > 2 { out.append((v1 & 0x0f) << 4 | v2 >> 2) }
            if n > 3 { out.append((v2 & 0x03) << 6 | v3) }
            // Bits below the last whole byte must be zero (canonical spelling).
            if canonical, n == 2, v1 & 0x0f != 0 { return nil }
            if canonical, n == 3, v2 & 0x03 != 0 { return nil }
            i += 4
        }
        return out
    }
}
