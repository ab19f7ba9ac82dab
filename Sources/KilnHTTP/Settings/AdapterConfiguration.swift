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
    public var allowUnsigned = Key.allowUnsigned.defaultValue

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
        ConfigField(Key.allowUnsigned) { $0.allowUnsigned = $1 },
    ]

    public init() {}

    /// Keys whose values are secrets (`kiln config dump` hides them).
    public static let secretKeys: Set<String> = Set([Key.thumborKey].filter(\.isSecret).map(\.key))

    /// The adapters switched on, in the order they are asked (imgix, which claims any query
    /// string, last). `origins`: the HTTP origins absolute source URLs may name.
    public func adapters(origins: [AdapterOrigin] = []) -> URLAdapters {
        var list: [any URLAdapter] = []
        if nextjs { list.append(NextImageAdapter(origins: origins)) }
        if cloudflare { list.append(CloudflareAdapter(origins: origins)) }
        if thumbor { list.append(ThumborAdapter(key: thumborKey, origins: origins)) }
        if imgix { list.append(ImgixAdapter()) }
        return URLAdapters(adapters: list, allowUnsigned: allowUnsigned)
    }
}
