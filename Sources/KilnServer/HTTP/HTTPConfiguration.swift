import KilnCore

/// `[http]`: headers of the answers.
public struct HTTPConfiguration: Sendable, Equatable {
    /// `cache_control`: `Cache-Control` of images. Default `public, max-age=31536000` (a year:
    /// a variant never changes under its URL unless the source does, and then its ETag changes).
    public var cacheControl = "public, max-age=31536000"
    /// `error_cache_control`: `Cache-Control` of error answers. Default `no-store`, so a CDN does
    /// not keep a 404 for a file that is uploaded a moment later.
    public var errorCacheControl = "no-store"
    /// `server_timing`: send `Server-Timing` with the phases of each render. Default true.
    public var serverTiming = true

    public static let keys: Set<String> = ["http.cache_control", "http.error_cache_control", "http.server_timing"]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        cacheControl = v.string("http.cache_control", default: cacheControl)
        errorCacheControl = v.string("http.error_cache_control", default: errorCacheControl)
        serverTiming = try v.bool("http.server_timing", default: serverTiming)
    }
}
