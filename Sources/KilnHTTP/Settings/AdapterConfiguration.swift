import KilnModel

/// `[adapters]`: foreign URL schemes Kiln answers besides its own (`URLAdapter`), each off by
/// default. An adapted URL is parsed into the same request as its native twin, so both share one
/// cache entry and `ETag`; unsigned adapted URLs meet `limits.allowed_*` like `/unsafe/` URLs.
public struct AdapterConfiguration: ConfigSection, Equatable {
    public var nextjs = Key.nextjs.defaultValue
    public var cloudflare = Key.cloudflare.defaultValue
    public var thumbor = Key.thumbor.defaultValue
    public var thumborKey = Key.thumborKey.defaultValue
    public var imgix = Key.imgix.defaultValue
    public var imgproxy = Key.imgproxy.defaultValue
    public var imgproxyKeys = Key.imgproxyKeys.defaultValue
    public var imgproxySalts = Key.imgproxySalts.defaultValue
    public var imgproxySignatureSize = Key.imgproxySignatureSize.defaultValue
    public var imgproxyWatermark = Key.imgproxyWatermark.defaultValue
    public var allowUnsigned = Key.allowUnsigned.defaultValue
    public var imgixToken = Key.imgixToken.defaultValue

    public enum Key {
        public static let nextjs = Setting.bool(
            "adapters.nextjs", default: false,
            doc: "answer Next.js's optimizer URLs `/_next/image?url=…&w=…&q=…` (its default loader, `images.path` pointed at Kiln) as `w:/q:/f:auto`")
        public static let cloudflare = Setting.bool(
            "adapters.cloudflare", default: false,
            doc: "answer Cloudflare Image Resizing URLs `/cdn-cgi/image/<k=v,…>/<source>` (docs/integrations.md has the mapping)")
        public static let thumbor = Setting.bool(
            "adapters.thumbor", default: false,
            doc: "answer thumbor URLs `/unsafe/300x200/smart/filters:quality(80)/<image>` and signed ones `/<hmac>/…` "
                + "(docs/integrations.md has the mapping); `/unsafe/` followed by a native option stays native")
        public static let thumborKey = Setting.text(
            "adapters.thumbor_key", default: "",
            doc: "thumbor's SECURITY_KEY: signed thumbor URLs are checked with it (a bad signature is a 403) and admitted as signed; "
                + "with it, `/unsafe/` thumbor URLs need adapters.allow_unsigned; empty: signed thumbor URLs are refused").secret()
        public static let imgix = Setting.bool(
            "adapters.imgix", default: false,
            doc: "read a query string on a plain source path as imgix parameters (`/photos/cat.jpg?w=300&fit=crop`); off: query strings are ignored")
        public static let imgproxy = Setting.bool(
            "adapters.imgproxy", default: false,
            doc: "answer imgproxy's processing URLs `/<signature>/<options>/plain/<source>@<ext>` and `/<signature>/<options>/<base64 source>.<ext>` "
                + "with imgproxy's option names (docs/migrate-imgproxy.md)")
        public static let imgproxyKeys = Setting<[[UInt8]]>.custom(
            "adapters.imgproxy_keys", default: [], type: "hex list", expected: "hex keys separated by commas (imgproxy's IMGPROXY_KEYS)",
            doc: "imgproxy's signing keys (hex, comma separated; `IMGPROXY_KEY`/`IMGPROXY_KEYS`); empty: imgproxy URLs are unsigned (`insecure`)",
            parse: { SecurityConfiguration.parseHexList($0) }, format: { SecurityConfiguration.formatHexList($0) }).secret()
        public static let imgproxySalts = Setting<[[UInt8]]>.custom(
            "adapters.imgproxy_salts", default: [], type: "hex list", expected: "hex salts separated by commas, one per key",
            doc: "imgproxy's salts (`IMGPROXY_SALT`/`IMGPROXY_SALTS`), as many as `adapters.imgproxy_keys`",
            parse: { SecurityConfiguration.parseHexList($0) }, format: { SecurityConfiguration.formatHexList($0) }).secret()
        public static let imgproxySignatureSize = Setting.count(
            "adapters.imgproxy_signature_size", default: 32, in: 1...32,
            doc: "bytes of imgproxy's HMAC kept in its URLs (`IMGPROXY_SIGNATURE_SIZE`)")
        public static let imgproxyWatermark = Setting.text(
            "adapters.imgproxy_watermark", default: "",
            doc: "the `[watermarks]` entry imgproxy's `wm:` draws (imgproxy's one `IMGPROXY_WATERMARK_PATH`); empty: `wm:` is a 400")
        public static let imgixToken = Setting.text(
            "adapters.imgix_token", default: "",
            doc: "imgix's secure URL token: an imgix URL's `s=` (the MD5 of the token, the path and the query) is checked with it, "
                + "a valid one is admitted as a signed URL, a wrong one is a 403, a URL without `s=` is refused unless "
                + "`adapters.allow_unsigned`; empty: `s=` is a 400").secret()
        public static let allowUnsigned = Setting.bool(
            "adapters.allow_unsigned", default: false,
            doc: "accept adapted URLs (which carry no signature) while URLs must be signed (`security.keys`); "
                + "they then meet `limits.allowed_*` like unsigned URLs; off: 403 (nginx's trusted rewrites are always accepted)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.nextjs) { $0.nextjs = $1 },
        ConfigField(Key.cloudflare) { $0.cloudflare = $1 },
        ConfigField(Key.thumbor) { $0.thumbor = $1 },
        ConfigField(Key.thumborKey) { $0.thumborKey = $1 },
        ConfigField(Key.imgix) { $0.imgix = $1 },
        ConfigField(Key.imgproxy) { $0.imgproxy = $1 },
        ConfigField(Key.imgproxyKeys) { $0.imgproxyKeys = $1 },
        ConfigField(Key.imgproxySalts) { $0.imgproxySalts = $1 },
        ConfigField(Key.imgproxySignatureSize) { $0.imgproxySignatureSize = $1 },
        ConfigField(Key.imgproxyWatermark) { $0.imgproxyWatermark = $1 },
        ConfigField(Key.imgixToken) { $0.imgixToken = $1 },
        ConfigField(Key.allowUnsigned) { $0.allowUnsigned = $1 },
    ]

    public init() {}

    /// Refuses imgproxy keys and salts of unequal counts.
    public func validate(origin: (String) -> String = { _ in "default" }) throws(ConfigError) {
        guard imgproxyKeys.count == imgproxySalts.count else {
            throw .invalid(key: Key.imgproxySalts.key, value: "\(imgproxySalts.count) salt(s)",
                           expected: "one salt per key: \(imgproxyKeys.count) key(s) in \(Key.imgproxyKeys.key)", origin: origin(Key.imgproxySalts.key))
        }
    }

    /// imgproxy's signature check: its algorithm is Kiln's own (`URLSignature`), with its keys.
    public var imgproxySignature: URLSignature? {
        guard !imgproxyKeys.isEmpty else { return nil }
        return URLSignature(keys: zip(imgproxyKeys, imgproxySalts).map { SigningKey(key: $0, salt: $1) }, size: imgproxySignatureSize)
    }

    /// The adapters switched on, in the order they are asked (imgix, which claims any query
    /// string, last). `origins`: the HTTP origins absolute source URLs may name.
    public func adapters(origins: [AdapterOrigin] = []) -> URLAdapters {
        var list: [any URLAdapter] = []
        if nextjs { list.append(NextImageAdapter(origins: origins)) }
        if cloudflare { list.append(CloudflareAdapter(origins: origins)) }
        if thumbor { list.append(ThumborAdapter(key: thumborKey, origins: origins)) }
        if imgproxy {
            list.append(ImgproxyAdapter(signature: imgproxySignature, origins: origins,
                                        watermark: imgproxyWatermark.isEmpty ? nil : imgproxyWatermark))
        }
        if imgix { list.append(ImgixAdapter(token: imgixToken)) }
        return URLAdapters(adapters: list, allowUnsigned: allowUnsigned)
    }
}
