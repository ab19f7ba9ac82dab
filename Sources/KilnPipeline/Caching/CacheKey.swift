import KilnModel

/// The identity of one cached result: the canonical request, the output format as far as it is
/// known before rendering, the source version, the encoder settings and a format version.
///
/// `hex` (SHA-256 of `text`) names memory entries, disk files and lock files; `text` is stored in
/// every disk entry and compared on read. Never `hashValue` (it changes from process to process).
public struct CacheKey: Sendable, Hashable {
    /// Bump when the same key would have to give different bytes (a new encoder, a changed
    /// processor) or when the disk entry layout changes: old entries then simply stop matching.
    /// 2: sources with an ICC profile are converted to sRGB.
    /// 3: settings derived from the resolved encode options (`progressive` counted); failures
    ///    stored as `PipelineFailure` kinds.
    /// 4: the fixed-point resampler (on every CPU) and the JPEG decode-scale choice changed
    ///    output bytes. `GoldenDigestTests` (Tests/KilnPipelineTests/Golden) now fails when bytes
    ///    change while this stays the same.
    public static let formatVersion = 4

    /// The text the digest is taken of.
    public let text: String
    /// SHA-256 of `text`: 64 lowercase hex digits.
    public let hex: String
    /// The source path relative to the root (kept in disk entries for `purge(sourcePath:)`).
    public let sourcePath: String
    /// The key text built with the source's portable identity (`SourceIdentity.portableCanonical`,
    /// without the inode), and a local file's content digest when one is known
    /// (`sharing(sourceDigest:)`): what `sharedHex` digests.
    private(set) var sharedText: String
    /// The name of the result in the shared result store (`SharedCaching`), the same on every
    /// host: SHA-256 (64 hex digits) of `sharedText`. Computed when asked (only a configured
    /// store asks), so a request without one digests one key text, as before.
    public var sharedHex: String { Digest.sha256Hex(sharedText) }

    /// - Parameters:
    ///   - canonicalRequest: `ImageRequest.canonical` (ends with the source path).
    ///   - outputFormat: the output format as decided before rendering: `jpeg`, `png`, `webp`, `avif`,
    ///     an `f:auto` Accept class such as `avif+webp`, or `source` when it is the source's format (a function of the source version, which is
    ///     part of the key). `CacheKey.outputToken(_:accept:)` computes it.
    ///   - source: the version of the source bytes (`OpenedSource.identity`, from `fstat`).
    ///   - settings: configuration that changes the bytes for the same URL (quality defaults,
    ///     WebP method, progressive, background): `OutputConfiguration.cacheSettings(for:outputToken:)`.
    public init(canonicalRequest: String, outputFormat: String, source: SourceIdentity, sourcePath: String,
                settings: String = "", version: Int = CacheKey.formatVersion) {
        // The request is length-prefixed so that no spelling of it can imitate the fields after it.
        let request = "\(canonicalRequest.utf8.count):\(canonicalRequest)\n\(outputFormat)\n"
        text = "kiln-cache/\(version)\n" + request + source.canonical + "\n" + settings
        hex = Digest.sha256Hex(text)
        sharedText = "kiln-shared/\(version)\n" + request + source.portableCanonical + "\n" + settings
        self.sourcePath = sourcePath
    }

    /// This key as the shared result store names it for a source whose bytes have the SHA-256
    /// `sourceDigest`: size and modification time alone do not tell two versions of a file apart
    /// when an edit kept both (`exiftool -P`, `rsync -t`), and the inode differs from host to
    /// host; the content does not. The local key (`text`, `hex`) stays as it was.
    public func sharing(sourceDigest: String) -> CacheKey {
        var key = self
        key.sharedText += "\nsource-sha256=\(sourceDigest)"
        return key
    }

    /// The key of `request` for a client sending `accept`, from the source's identity.
    public init(request: ImageRequest, accepted: FormatNegotiation, source: SourceIdentity, settings: String = "") {
        self.init(canonicalRequest: request.canonical, outputFormat: CacheKey.outputToken(request.output, accepted: accepted),
                  source: source, sourcePath: request.sourcePath, settings: settings)
    }

    /// The key of `request` rendered with `output`'s defaults: the settings part derived from the
    /// encode options the encoder would receive (`OutputConfiguration.cacheSettings`), plus
    /// `assets`, the identity of the configured files the request draws
    /// (`WatermarkLibrary.identity(for:)`; empty for none, which leaves the key as it was).
    public init(request: ImageRequest, accepted: FormatNegotiation, source: SourceIdentity, output: OutputConfiguration,
                assets: String = "") {
        let token = CacheKey.outputToken(request.output, accepted: accepted)
        let settings = request.output.document == nil ? output.cacheSettings(for: request.output, outputToken: token)
                                                       : output.documentCacheSettings
        self.init(canonicalRequest: request.canonical, outputFormat: token, source: source, sourcePath: request.sourcePath,
                  settings: assets.isEmpty ? settings : settings + "\n" + assets)
    }

    /// The output format as far as it is known before the source is read: a format's name, or for
    /// `f:auto` the client's `Accept` class (`FormatNegotiation.token`: `avif+webp`, `avif`, `webp`
    /// or `source`), computed exactly as `OutputOptions.resolvedFormat` decides. The rendered
    /// format is a function of that class, the result's size and the source (whose version is in
    /// the key), so the key is derived once, before rendering, and stays exact (the settings part
    /// then covers every format: `cacheSettings(for:outputToken:)`).
    public static func outputToken(_ options: OutputOptions, accepted: FormatNegotiation) -> String {
        if let document = options.document { return document.rawValue }
        switch options.format {
        case .format(let f): return f.rawValue
        case .source: return "source"
        case .auto: return accepted.token
        }
    }
}
