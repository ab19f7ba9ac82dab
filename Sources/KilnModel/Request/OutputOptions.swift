/// The requested output format: a concrete format, `auto` (negotiated with `Accept`), or the source's.
public enum FormatChoice: Sendable, Hashable {
    /// Keep the source's format (no `f:` option).
    case source
    /// The first of `http.auto_formats` (default AVIF, then WebP) that the client accepts and
    /// that can hold the result (`FormatNegotiation`), else the source format (PNG or JPEG by
    /// alpha when the source's format cannot hold the result or cannot be written, e.g. HEIC);
    /// answers carry `Vary: Accept`.
    case auto
    case format(ImageFormat)

    public var canonical: String? {
        switch self {
        case .source: nil
        case .auto: "auto"
        case .format(let f): f.rawValue
        }
    }
}

/// Options for the encoder, from the URL.
public struct OutputOptions: Sendable, Hashable {
    public var format: FormatChoice = .source
    /// 1...100; nil uses the configured default of the output format.
    public var quality: Int?
    /// `format_quality:<format>:<q>…` (`fq`): the quality of each format, below `quality`.
    public var formatQualities: [ImageFormat: Int] = [:]
    /// `background:<hex>` (`bg`): what transparent pixels are flattened onto when the output has
    /// no alpha, and the fill of `pad`; nil uses the configured `output.background`.
    public var background: RGBColor?
    /// `progressive:<0|1>` (`pg`): progressive JPEG, interlaced PNG; nil uses the configuration.
    public var progressive: Bool?
    /// `subsampling:<444|422|420>` (`ss`): JPEG chroma subsampling; nil uses the configuration.
    public var subsampling: ChromaSubsampling?
    /// `lossless:1` (`ll`): lossless WebP.
    public var lossless = false
    /// `strip:<1|copyright|0>`: what the output keeps of the source's EXIF and XMP
    /// (`MetadataPolicy`); nil: the configured default (`output.strip`, `output.strip_signed`).
    public var strip: MetadataPolicy?
    /// `icc:<keep|srgb>`: keep the source's RGB colour profile, or convert to sRGB
    /// (`ColourProfilePolicy`); nil: `output.colour_profile`.
    public var colourProfile: ColourProfilePolicy?
    /// `frame:<n>`: the 0-based frame of an animated source written as a still (any output
    /// format); nil: the whole animation for animated outputs, the first frame for still ones.
    /// Out of range is a 400 (`PipelineError.frameOutOfRange`); ignored for still sources.
    public var frame: Int?
    /// `page:<n>`: the 0-based image of a file of several (a TIFF's pages, an ICO's entries);
    /// nil: a TIFF's first page, an ICO's largest entry. Out of range is a 400
    /// (`PipelineError.pageOutOfRange`), as is a page beyond 0 of a single-image source.
    public var page: Int?
    /// `f:json`, `f:blurhash`, `f:thumbhash`: an answer about the image instead of an image
    /// (`format` then stays `.source`, and the encoder options do not apply).
    public var document: DocumentKind?
    /// `placeholders:1` (`ph`): `f:json` also carries the dominant colour, BlurHash, ThumbHash
    /// and an LQIP data URL (a small decode); without it `f:json` reads headers only.
    public var placeholders = false
    /// `blurhash:<x>:<y>` (`bh`): BlurHash components for `f:blurhash` and `f:json/ph:1`; nil: 4 × 3.
    public var blurhash: BlurHashComponents?
    /// `max_bytes:<n>` (`mb`): the encoded result should be at most `n` bytes; JPEG, WebP and AVIF
    /// lower their quality to fit (`ByteBudget`), other outputs are encoded once. Nil: no budget.
    public var maxBytes: Int?

    public init(format: FormatChoice = .source, quality: Int? = nil) {
        self.format = format
        self.quality = quality
    }

    /// The canonical segments of the output options, in a fixed order.
    public var canonicalSegments: [String] {
        var parts: [String] = []
        if let background { parts.append("background:\(background)") }
        if let quality { parts.append("q:\(quality)") }
        if !formatQualities.isEmpty {
            let pairs = formatQualities.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key.rawValue):\($0.value)" }
            parts.append("fq:" + pairs.joined(separator: ":"))
        }
        if let document { parts.append("f:\(document.rawValue)") } else if let f = format.canonical { parts.append("f:\(f)") }
        if placeholders { parts.append("placeholders:1") }
        if let blurhash { parts.append("blurhash:\(blurhash.x):\(blurhash.y)") }
        if let progressive { parts.append("progressive:\(progressive ? 1 : 0)") }
        if let subsampling { parts.append("subsampling:\(subsampling.rawValue)") }
        if lossless { parts.append("lossless:1") }
        if let strip { parts.append("strip:\(strip.urlValue)") }
        if let colourProfile { parts.append("icc:\(colourProfile.rawValue)") }
        if let frame { parts.append("frame:\(frame)") }
        if let page { parts.append("page:\(page)") }
        if let maxBytes { parts.append("max_bytes:\(maxBytes)") }
        return parts
    }

    /// Applies `transform` to every quality the options hold (`q:`), so a check of qualities
    /// (`VariantAllowList`) meets each of them, including ones options added later carry.
    public mutating func mapQualities(_ transform: (Int) throws(SpecError) -> Int) throws(SpecError) {
        if let q = quality { quality = try transform(q) }
        for (format, q) in formatQualities { formatQualities[format] = try transform(q) }
    }

    /// The concrete output format for a source format and the request's `Accept` header, before the
    /// result's size is known.
    public func resolvedFormat(source: ImageFormat, accepted: FormatNegotiation) -> ImageFormat {
        switch format {
        case .format(let f): return f
        case .source: return source
        case .auto: return accepted.choice { _ in true } ?? source
        }
    }

    /// The concrete output format once the result is known. `f:auto` takes the first accepted
    /// offered format that can hold `size` (AVIF and WebP stop at 16384 and 16383 px); when none
    /// can, the source's format, or, when that cannot hold the result either or cannot be written
    /// (HEIC), PNG when the result has alpha and JPEG when not. Without `f:` a source that cannot
    /// be written (HEIC) is written as PNG or JPEG by alpha too. An explicit format (or a
    /// writable source's, without `f:`) is kept even when it cannot hold the result: the pipeline
    /// refuses that with a 413 naming the limit.
    ///
    /// The choice is a function of the source (its format, whose version is in the cache key),
    /// the request and the `Accept` class (`FormatNegotiation.token`), so the key derived before
    /// rendering still names exactly one result.
    public func resolvedFormat(source: ImageFormat, accepted: FormatNegotiation, size: PixelSize, hasAlpha: Bool) -> ImageFormat {
        let fallback: ImageFormat = hasAlpha ? .png : .jpeg
        switch format {
        case .format(let f): return f
        case .source: return source.isNegotiable ? source : fallback
        case .auto:
            if let chosen = accepted.choice(where: { $0.canHold(size) }) {
                return chosen
            }
            if source.isNegotiable, source.canHold(size) { return source }
            return fallback.canHold(size) ? fallback : .png
        }
    }
}
