import KilnModel

/// `[adapters]`: foreign URL schemes Kiln answers besides its own (`URLAdapter`), each off by
/// default. An adapted URL is parsed into the same request as its native twin, so both share one
/// cache entry and `ETag`; unsigned adapted URLs meet `limits.allowed_*` like `/unsafe/` URLs.
public struct AdapterConfiguration: ConfigSection, Equatable {
    public var nextjs = Key.nextjs.defaultValue
    public var cloudflare = Key.cloudflare.defaultValue
    public var imgix = Key.imgix.defaultValue
    public var allowUnsigned = Key.allowUnsigned.defaultValue
    public var imgixToken = Key.imgixToken.defaultValue

    public enum Key {
        public static let nextjs = Setting.bool(
            "adapters.nextjs", default: false,
            doc: "answer Next.js's optimizer URLs `/_next/image?url=…&w=…&q=…` (its default loader, `images.path` pointed at Kiln) as `w:/q:/f:auto`")
        public static let cloudflare = Setting.bool(
            "adapters.cloudflare", default: false,
            doc: "answer Cloudflare Image Resizing URLs `/cdn-cgi/image/<k=v,…>/<source>` (docs/integrations.md has the mapping)")
        public static let imgix = Setting.bool(
            "adapters.imgix", default: false,
            doc: "read a query string on a plain source path as imgix parameters (`/photos/cat.jpg?w=300&fit=crop`); off: query strings are ignored")
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
        ConfigField(Key.imgix) { $0.imgix = $1 },
        ConfigField(Key.imgixToken) { $0.imgixToken = $1 },
        ConfigField(Key.allowUnsigned) { $0.allowUnsigned = $1 },
    ]

    public init() {}

    /// The adapters switched on, in the order they are asked (imgix, which claims any query
    /// string, last). `origins`: the HTTP origins absolute source URLs may name.
    public func adapters(origins: [AdapterOrigin] = []) -> URLAdapters {
        var list: [any URLAdapter] = []
        if nextjs { list.append(NextImageAdapter(origins: origins)) }
        if cloudflare { list.append(CloudflareAdapter(origins: origins)) }
        if imgix { list.append(ImgixAdapter(token: imgixToken)) }
        return URLAdapters(adapters: list, allowUnsigned: allowUnsigned)
    }
}
