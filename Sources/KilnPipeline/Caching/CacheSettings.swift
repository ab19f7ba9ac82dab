import KilnModel

extension OutputConfiguration {
    /// The settings part of a cache key: what the configuration adds to a URL that changes the
    /// encoded bytes. Derived, not listed: it is the `EncodeOptions.canonical` of the very options
    /// `encodeOptions(format:request:metadata:)` gives the encoder, plus the flatten background.
    ///
    /// The key must be known before the source is read, but the output format may not be
    /// (`f:auto` without WebP in `Accept`, or no `f:` at all: the source's format, known after
    /// sniffing). The options depend only on (configuration, the URL's output options, format),
    /// so for a token that names a format they are resolved for that format, and for `source`
    /// they are resolved for every format Kiln encodes, in a fixed order. That costs a few
    /// strings per key and needs nothing from the source; a setting that only matters for one
    /// format then also changes the keys of the others when the format is not known in advance,
    /// which only costs a re-render after a configuration change.
    ///
    /// `strip` (what of the metadata is kept) is the URL's `strip:` or `output.strip`: the
    /// metadata itself is the source's, whose version is in the key.
    public func cacheSettings(for request: OutputOptions, outputToken: String) -> String {
        // `f:auto` may fall back from WebP to another format when the result does not fit WebP
        // (`OutputOptions.resolvedFormat(source:accept:size:hasAlpha:)`), so its settings cover
        // every format even when the token says `webp`.
        let named = request.format == .auto ? nil : ImageFormat(rawValue: outputToken)
        // Without a named format the output is never GIF (written only for `f:gif`).
        let formats = named.map { [$0] } ?? ImageFormat.allCases.filter(\.isNegotiable)
        let policy = request.strip ?? strip
        let metadata: ImageMetadata? = policy == .all ? nil : ImageMetadata()
        var parts = formats.map { encodeOptions(format: $0, request: request, metadata: metadata).canonical }
        parts.append("bg=\(flattenBackground(for: request))")
        // What is kept of the source's metadata; all of it (`strip:0`) holds the GPS position only
        // with `output.info_gps`.
        if policy != .all { parts.append("strip=\(policy.rawValue)") }
        if keepsProfile(for: request) { parts.append("icc=keep") }
        if policy == .none { parts.append("gps=\(infoGPS ? 1 : 0)") }
        return parts.joined(separator: "|")
    }

    /// What transparent pixels are flattened onto for outputs without alpha: the URL's `bg:`,
    /// else `background`.
    public func flattenBackground(for request: OutputOptions) -> RGBColor {
        request.background ?? background
    }

    /// The settings part of an `f:json` / `f:blurhash` / `f:thumbhash` key: whether GPS is
    /// reported, and the LQIP's WebP options (`ImagePipeline.lqipOptions`).
    public var documentCacheSettings: String {
        "doc;gps=\(infoGPS ? 1 : 0);lqip=\(lqipOptions.canonical)"
    }

    /// The encoder options of `f:json`'s LQIP: lossy WebP at quality 30 with the configured method.
    public var lqipOptions: EncodeOptions {
        EncodeOptions(format: .webp, quality: 30, webpMethod: webpMethod)
    }
}
