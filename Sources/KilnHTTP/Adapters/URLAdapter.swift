import KilnModel

/// One foreign URL scheme (Next.js's `/_next/image`, Cloudflare's `/cdn-cgi/image/`, imgix's query
/// parameters) translated into Kiln's own URL grammar. An adapter never builds an `ImageRequest`
/// itself: it writes the native options (`w:640`, `q:75`, `f:auto`) and the source path, and
/// `RequestGate` parses them with the one `SpecParser`, so an adapted URL and its native twin are
/// the same request: one canonical form, one cache key, one `ETag`, one render lock.
public protocol URLAdapter: Sendable {
    /// The setting's last word (`nextjs` for `adapters.nextjs`), used in error messages.
    var name: String { get }
    /// The native translation, or nil when the URL is not this adapter's. `path` is the raw
    /// (percent-encoded) path, `query` the raw query string after `?` (nil without one). A URL of
    /// this adapter that cannot be translated throws `AdapterError` (400).
    func adapt(path: String, query: String?) throws(AdapterError) -> AdaptedURL?
}

/// An adapter's translation: native option segments and a decoded source path, relative to the
/// root (`photos/cat.jpg`, or an origin's name and the rest of the path).
public struct AdaptedURL: Sendable, Equatable {
    /// Whether a foreign URL carried its scheme's signature (imgproxy's, thumbor's, imgix's `s=`).
    public enum Signing: Sendable, Equatable {
        /// No signature, and the adapter has no key: an unsigned URL like `/unsafe/`.
        case unsigned
        /// No signature (`insecure`, `unsafe`, no `s=`) while the adapter has a key: refused (403)
        /// unless `adapters.allow_unsigned`, as the foreign server would.
        case unsignedWhileKeyed
        /// The foreign signature checked with the adapter's key: admitted as a signed URL (no
        /// option policy, no allow-lists), as the foreign server admits it.
        case verified
    }

    public var adapter: String
    public var options: [String]
    public var sourcePath: String
    public var signing: Signing
    /// Where to send the client (`302`) when the render fails (Cloudflare's `onerror=redirect`):
    /// the source as the foreign URL wrote it, an absolute URL or a path; nil: the error is answered.
    public var onErrorRedirect: String?

    public init(adapter: String, options: [String], sourcePath: String, signing: Signing = .unsigned, onErrorRedirect: String? = nil) {
        self.adapter = adapter
        self.options = options
        self.sourcePath = sourcePath
        self.signing = signing
        self.onErrorRedirect = onErrorRedirect
    }

    /// The native, already-decoded path the parser reads: the options, `-` (so a source folder
    /// named like an option stays a folder), then the source: `/w:640/q:75/f:auto/-/photos/cat.jpg`.
    public var nativePath: String {
        "/" + (options + ["-", sourcePath]).joined(separator: "/")
    }
}

/// Why an adapted URL was refused (400): names the parameter and says what Kiln would need.
public struct AdapterError: Error, Equatable, Sendable {
    public var message: String
    /// A foreign signature that does not match (or is malformed): 403, and nothing is rendered.
    public var isBadSignature: Bool

    public init(_ adapter: String, _ message: String) {
        self.message = "\(adapter) URL: \(message)"
        self.isBadSignature = false
    }

    /// A signature the adapter's key did not make (403).
    public static func badSignature(_ adapter: String, _ message: String = "invalid signature for this URL") -> AdapterError {
        var e = AdapterError(adapter, message)
        e.isBadSignature = true
        return e
    }

    static func unsupported(_ adapter: String, _ parameters: [String]) -> AdapterError {
        AdapterError(adapter, "not supported: \(parameters.map { "'\($0)'" }.joined(separator: ", "))")
    }
}
