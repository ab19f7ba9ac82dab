import KilnModel

/// `[http]`: headers of the answers.
public struct HTTPConfiguration: ConfigSection, Equatable {
    /// `Cache-Control` of images. A year by default: a variant never changes under its URL unless
    /// the source does, and then its ETag changes.
    public var cacheControl = Key.cacheControl.defaultValue
    /// `Cache-Control: CDN-Cache-Control` (RFC 9213) of images, for CDNs that honour it: a lifetime
    /// for the CDN apart from browsers'. Empty: not sent.
    public var cdnCacheControl = Key.cdnCacheControl.defaultValue
    /// Which image answers add `immutable` (`CacheControlPolicy`).
    public var immutable = Key.immutable.defaultValue
    /// `Cache-Control` of error answers; `no-store` so a CDN does not keep a 404 for a file that is
    /// uploaded a moment later.
    public var errorCacheControl = Key.errorCacheControl.defaultValue
    /// Send `Server-Timing` with the phases that ran (images, 304s, errors).
    public var serverTiming = Key.serverTiming.defaultValue
    /// `Timing-Allow-Origin` of every image answer; empty: not sent.
    public var timingAllowOrigin = Key.timingAllowOrigin.defaultValue
    /// `Access-Control-Allow-Origin` (`CORSPolicy`): `*`, origins, or empty (off).
    public var allowOrigin = Key.allowOrigin.defaultValue
    /// The surrogate-key headers of image answers (`SurrogateKeys`), each on or off.
    public var surrogateKey = Key.surrogateKey.defaultValue
    public var xkey = Key.xkey.defaultValue
    public var cacheTag = Key.cacheTag.defaultValue

    /// The formats `f:auto` may answer with, best first (`FormatNegotiation`); handed to the
    /// pipeline as `OutputConfiguration.autoFormats`.
    public var autoFormats = Key.autoFormats.defaultValue

    /// Client Hints (`ClientHints`): the widths `w:auto` snaps up to, and its width without hints.
    public var hintWidths = Key.hintWidths.defaultValue
    public var hintDefaultWidth = Key.hintDefaultWidth.defaultValue
    /// Save-Data: which URLs it applies to, the quality it writes, and whether a slow `ECT` counts.
    public var saveData = Key.saveData.defaultValue
    public var saveDataQuality = Key.saveDataQuality.defaultValue
    public var saveDataECT = Key.saveDataECT.defaultValue

    public enum Key {
        public static let cacheControl = Setting.text("http.cache_control", default: "public, max-age=31536000",
                                                      doc: "`Cache-Control` of images")
        public static let cdnCacheControl = Setting.text(
            "http.cdn_cache_control", default: "", expected: "a Cache-Control value (one line)",
            doc: "`CDN-Cache-Control` of images (RFC 9213: a CDN's own lifetime, e.g. `max-age=31536000, stale-if-error=86400`); empty: not sent",
            check: { v in !v.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        public static let immutable = Setting<Immutability>.choice(
            "http.immutable", default: .versioned,
            doc: "add `immutable` to images' `Cache-Control`: `versioned` for URLs with `cb:<version>`, `signed` for those and every signed URL (only where sources never change under a path), `off`")
        public static let errorCacheControl = Setting.text("http.error_cache_control", default: "no-store",
                                                           doc: "`Cache-Control` of error answers")
        public static let serverTiming = Setting.bool("http.server_timing", default: true, doc: "send `Server-Timing`")
        public static let timingAllowOrigin = Setting.text(
            "http.timing_allow_origin", default: "", expected: "origins such as * or https://example.com (one line)",
            doc: "`Timing-Allow-Origin` (e.g. `*`) so browsers' Resource Timing reads `Server-Timing` cross-origin; empty: not sent",
            check: { v in !v.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        public static let allowOrigin = Setting<[String]>.custom(
            "http.allow_origin", default: [], type: "origin list",
            expected: "* or origins such as https://example.com,https://www.example.com separated by commas, or empty",
            doc: "`Access-Control-Allow-Origin` of every answer, for images drawn on a canvas or used by WebGL: `*`, or "
                + "origins matched exactly against the request's `Origin` (that origin is answered, with `Vary: Origin`); empty: not sent",
            parse: { CORSPolicy.parse($0) }, format: { $0.joined(separator: ",") })
        public static let surrogateKey = Setting.bool(
            "http.surrogate_key", default: true,
            doc: "send `Surrogate-Key` (Fastly) on image answers: the source's tag `kiln-src-<hex>` and `kiln-preset-<name>` per preset used, separated by spaces")
        public static let xkey = Setting.bool(
            "http.xkey", default: true,
            doc: "send `xkey` (Varnish vmod-xkey, `varnish/kiln.vcl`) on image answers: the same tags as `Surrogate-Key`")
        public static let cacheTag = Setting.bool(
            "http.cache_tag", default: true,
            doc: "send `Cache-Tag` (Cloudflare) on image answers: the same tags as `Surrogate-Key`, separated by commas")
        public static let autoFormats = Setting<[ImageFormat]>.custom(
            "http.auto_formats", default: FormatNegotiation.defaultOffered, type: "format list",
            expected: "a comma-separated list of avif and webp, best first (e.g. avif,webp), or empty",
            doc: "what `f:auto` may answer with, best first, when `Accept` allows it (`webp` turns AVIF off; empty: always the source's format)",
            parse: HTTPConfiguration.parseAutoFormats, format: { $0.map(\.rawValue).joined(separator: ",") })
        public static let hintWidths = Setting<[Int]>.custom(
            "http.hint_widths", default: [320, 640, 960, 1280, 1920], type: "width list",
            expected: "a comma-separated list of 1 to 32 widths in pixels (1...16384), e.g. 320,640,960,1280,1920",
            doc: "the widths a Client-Hinted `w:auto` snaps UP to (one variant per width; a hint above the largest gets the largest)",
            parse: HTTPConfiguration.parseWidths, format: { $0.map(String.init).joined(separator: ",") })
        public static let hintDefaultWidth = Setting.count(
            "http.hint_default_width", default: 960, in: 1...16_384,
            doc: "the width of `w:auto` when the request sends no usable width hint (`Sec-CH-Width`, `Sec-CH-Viewport-Width`)")
        public static let saveData = Setting<SaveDataScope>.choice(
            "http.save_data", default: .hinted,
            doc: "which URLs without `q:` `Save-Data: on` lowers to `http.save_data_quality`: `hinted` (those with `ch:1` or `w:auto`), `all` (every image URL; all then carry `Vary: Save-Data`), `off`")
        public static let saveDataQuality = Setting.count(
            "http.save_data_quality", default: 50, in: 1...100,
            doc: "the quality written for `Save-Data: on` (any output format) when the URL has no `q:`")
        public static let saveDataECT = Setting.bool(
            "http.save_data_ect", default: false,
            doc: "treat `ECT: 2g` and `ECT: slow-2g` as `Save-Data: on` (answers then also carry `Vary: ECT`)")
    }

    /// `320,640,960`-style lists: 1 to 32 whole widths in 1...16384, each at most once (any order).
    static func parseWidths(_ text: String) -> [Int]? {
        var widths: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = part.filter { $0 != " " && $0 != "\t" }
            guard !digits.isEmpty, digits.count <= 5, digits.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let w = Int(digits), (1...16_384).contains(w), !widths.contains(w) else { return nil }
            widths.append(w)
        }
        return (1...32).contains(widths.count) ? widths.sorted() : nil
    }

    /// `avif,webp`-style lists: known output formats that `Accept` can name, each at most once.
    static func parseAutoFormats(_ text: String) -> [ImageFormat]? {
        var formats: [ImageFormat] = []
        guard text.contains(where: { $0 != " " }) else { return formats }
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let name = part.filter { $0 != " " && $0 != "\t" }.lowercased()
            guard let format = ImageFormat(rawValue: name), format == .avif || format == .webp,
                  !formats.contains(format) else { return nil }
            formats.append(format)
        }
        return formats
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.cacheControl) { $0.cacheControl = $1 },
        ConfigField(Key.cdnCacheControl) { $0.cdnCacheControl = $1 },
        ConfigField(Key.immutable) { $0.immutable = $1 },
        ConfigField(Key.errorCacheControl) { $0.errorCacheControl = $1 },
        ConfigField(Key.serverTiming) { $0.serverTiming = $1 },
        ConfigField(Key.timingAllowOrigin) { $0.timingAllowOrigin = $1 },
        ConfigField(Key.allowOrigin) { $0.allowOrigin = $1 },
        ConfigField(Key.surrogateKey) { $0.surrogateKey = $1 },
        ConfigField(Key.xkey) { $0.xkey = $1 },
        ConfigField(Key.cacheTag) { $0.cacheTag = $1 },
        ConfigField(Key.autoFormats) { $0.autoFormats = $1 },
        ConfigField(Key.hintWidths) { $0.hintWidths = $1 },
        ConfigField(Key.hintDefaultWidth) { $0.hintDefaultWidth = $1 },
        ConfigField(Key.saveData) { $0.saveData = $1 },
        ConfigField(Key.saveDataQuality) { $0.saveDataQuality = $1 },
        ConfigField(Key.saveDataECT) { $0.saveDataECT = $1 },
    ]

    public init() {}
}
