import KilnModel

/// The surrogate keys of an image or document answer: the tags a CDN or an edge cache files the
/// answer under, so that one purge request drops every variant of a source (or every variant
/// made with one preset), whatever its URL.
///
/// The tags: the source's `SourceTag.headerValue` (`kiln-src-<32 hex>`, the same tag
/// `kiln cache purge --source` sends), then `kiln-preset-<name>` for each preset the URL used
/// (`ImageRequest.presets`, in URL order). A fallback answer carries the tags of the requested
/// source, not of the fallback file, so purging the source also drops its placeholder.
///
/// Three spellings, each turned on or off in `[http]`:
/// - `Surrogate-Key` (Fastly): tags separated by spaces;
/// - `xkey` (Varnish's vmod-xkey): tags separated by spaces;
/// - `Cache-Tag` (Cloudflare): tags separated by commas.
///
/// A preset name is the operator's (a TOML key, any text): a byte outside `A-Z a-z 0-9 . _ ~ -`
/// is written as `%XX`, so a tag never holds a space, a comma or a control character and stays
/// one token in every spelling.
public struct SurrogateKeys: Sendable, Equatable {
    /// Send `Surrogate-Key`.
    public var surrogateKey: Bool
    /// Send `xkey`.
    public var xkey: Bool
    /// Send `Cache-Tag`.
    public var cacheTag: Bool

    public init(surrogateKey: Bool = true, xkey: Bool = true, cacheTag: Bool = true) {
        self.surrogateKey = surrogateKey
        self.xkey = xkey
        self.cacheTag = cacheTag
    }

    /// The switches of `[http]` (`http.surrogate_key`, `http.xkey`, `http.cache_tag`).
    public init(_ http: HTTPConfiguration) {
        self.init(surrogateKey: http.surrogateKey, xkey: http.xkey, cacheTag: http.cacheTag)
    }

    /// The tag of preset `name`: `kiln-preset-<name>`, escaped as the type says.
    public static func presetTag(_ name: String) -> String {
        "kiln-preset-" + escaped(name)
    }

    /// The tags of an answer to `request`: the source's, then one per preset.
    public static func tags(for request: ImageRequest) -> [String] {
        [SourceTag(sourcePath: request.sourcePath).headerValue] + request.presets.map(presetTag)
    }

    /// The header fields to add to an answer to `request`: none when every header is off.
    public func headers(for request: ImageRequest) -> [(String, String)] {
        guard surrogateKey || xkey || cacheTag else { return [] }
        let tags = Self.tags(for: request)
        let spaced = tags.joined(separator: " ")
        var headers: [(String, String)] = []
        if surrogateKey { headers.append((HeaderName.surrogateKey, spaced)) }
        if xkey { headers.append((HeaderName.xkey, spaced)) }
        if cacheTag { headers.append((HeaderName.cacheTag, tags.joined(separator: ","))) }
        return headers
    }

    /// `name` with every byte outside the unreserved characters of RFC 3986 as `%XX`.
    static func escaped(_ name: String) -> String {
        PercentEncoding.encode(name, keeping: .unreserved)
    }
}
