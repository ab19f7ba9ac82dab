import KilnModel

/// `http.immutable`: which image answers add `immutable` to `Cache-Control`, telling browsers not
/// to revalidate while the answer is fresh (not even on reload).
///
/// `immutable` is only true when the URL's image can never change. Kiln's URLs name a source
/// path, and a file replaced under the same path changes the image (a new ETag) under the same
/// URL; a signature does not change with it, since it signs the path, not the file. So:
public enum Immutability: String, CaseIterable, Sendable {
    /// Never.
    case off
    /// URLs with a `cb:<version>` segment: the site writes a new version when it replaces a source.
    case versioned
    /// Versioned URLs and every signed URL: for sites whose sources never change under a path
    /// (uploads stored under content hashes or new names).
    case signed
}

/// The `Cache-Control` (and `CDN-Cache-Control`) of an image answer: the configured value, plus
/// `immutable` where `http.immutable` allows it, with every lifetime cut to the seconds left
/// before the URL's `exp:` so that no cache keeps (or serves stale) an image past its link.
public struct CacheControlPolicy: Sendable, Equatable {
    public var cacheControl: String
    public var cdnCacheControl: String
    public var immutable: Immutability

    public init(cacheControl: String, cdnCacheControl: String = "", immutable: Immutability = .versioned) {
        self.cacheControl = cacheControl
        self.cdnCacheControl = cdnCacheControl
        self.immutable = immutable
    }

    /// Lifetimes that an expiring URL caps.
    static let lifetimes = ["max-age=", "s-maxage=", "stale-while-revalidate=", "stale-if-error="]

    /// The headers for `request`, admitted as `provenance`, at unix second `now`.
    public func headers(for request: ImageRequest, provenance: RequestGate.Provenance, now: Int64) -> [(String, String)] {
        var value = cacheControl
        if isImmutable(request, provenance), !value.lowercased().contains("immutable"),
           !value.lowercased().contains("no-store"), !value.isEmpty {
            value += ", immutable"
        }
        var cdn = cdnCacheControl
        if let expires = request.expires {
            let left = max(0, expires - now)
            value = CacheControlPolicy.capping(value, maxAge: left)
            cdn = CacheControlPolicy.capping(cdn, maxAge: left)
        }
        var headers: [(String, String)] = []
        if !value.isEmpty { headers.append((HeaderName.cacheControl, value)) }
        if !cdn.isEmpty { headers.append((HeaderName.cdnCacheControl, cdn)) }
        return headers
    }

    func isImmutable(_ request: ImageRequest, _ provenance: RequestGate.Provenance) -> Bool {
        switch immutable {
        case .off: false
        case .versioned: request.version != nil
        case .signed: request.version != nil || provenance == .signed
        }
    }

    /// Each lifetime directive cut to `left` seconds; other directives unchanged.
    static func capping(_ cacheControl: String, maxAge left: Int64) -> String {
        cacheControl.split(separator: ",").map { raw -> String in
            let d = raw.trimmingSpacesAndTabs()
            for name in lifetimes where d.lowercased().hasPrefix(name) {
                guard let v = Int64(d.dropFirst(name.count)) else { return d }
                return name + String(min(v, left))
            }
            return d
        }.joined(separator: ", ")
    }
}
