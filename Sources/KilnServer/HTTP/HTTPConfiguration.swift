import KilnCore

/// `[http]`: headers of the answers.
public struct HTTPConfiguration: ConfigSection, Equatable {
    /// `Cache-Control` of images. A year by default: a variant never changes under its URL unless
    /// the source does, and then its ETag changes.
    public var cacheControl = Key.cacheControl.defaultValue
    /// `Cache-Control` of error answers; `no-store` so a CDN does not keep a 404 for a file that is
    /// uploaded a moment later.
    public var errorCacheControl = Key.errorCacheControl.defaultValue
    /// Send `Server-Timing` with the phases of each render.
    public var serverTiming = Key.serverTiming.defaultValue

    public enum Key {
        public static let cacheControl = Setting.text("http.cache_control", default: "public, max-age=31536000",
                                                      doc: "`Cache-Control` of images")
        public static let errorCacheControl = Setting.text("http.error_cache_control", default: "no-store",
                                                           doc: "`Cache-Control` of error answers")
        public static let serverTiming = Setting.bool("http.server_timing", default: true, doc: "send `Server-Timing`")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.cacheControl) { $0.cacheControl = $1 },
        ConfigField(Key.errorCacheControl) { $0.errorCacheControl = $1 },
        ConfigField(Key.serverTiming) { $0.serverTiming = $1 },
    ]

    public init() {}
}
