/// A request parsed once from the URL path: the operations in order, the output options and the
/// source path. Its `canonical` string is the identity of the variant (the cache key's base).
public struct ImageRequest: Sendable, Hashable {
    /// The source path relative to the configured root, without a leading slash.
    public var sourcePath: String
    public var operations: [Operation]
    public var output: OutputOptions
    /// Apply the EXIF orientation before the operations (`autorotate:0` / `ar:0` turns it off).
    public var autorotate: Bool
    /// `exp:<unix time>`: the URL is refused (410) after this second. Not part of `canonical`:
    /// the same image under a later expiry is the same cache entry.
    public var expires: Int64?
    /// `cachebuster:<token>` (`cb:`, imgproxy's name): a version the site puts in its URLs. It
    /// changes nothing in the image but is part of `canonical`, so a new token is a new variant
    /// under a new URL, and a URL that carries one may be answered `immutable` (`http.immutable`).
    public var version: String?
    /// `filename:` and `attachment:` (`Content-Disposition`). Not part of `canonical`: they change
    /// headers, not bytes.
    public var download: DownloadOptions
    /// What the URL left to the device (`ch:1`, `w:auto`, no `q:`), already resolved by the
    /// parser; not part of `canonical` (the resolved request is the request). The HTTP layer
    /// derives `Vary` from it.
    public var hintUse = DeviceHintUse()
    /// The names of the presets the URL used (`pr:<name>`), in URL order, each once. Not part of
    /// `canonical` (the expansion is): the HTTP layer tags answers with them (`SurrogateKeys`),
    /// so a CDN can purge every variant made with one preset.
    public var presets: [String] = []

    public init(sourcePath: String, operations: [Operation] = [], output: OutputOptions = OutputOptions(),
                autorotate: Bool = true, expires: Int64? = nil, version: String? = nil,
                download: DownloadOptions = DownloadOptions()) {
        self.sourcePath = sourcePath
        self.operations = operations
        self.output = output
        self.autorotate = autorotate
        self.expires = expires
        self.version = version
        self.download = download
    }

    /// One spelling for every way of writing the same request: aliases expanded, defaults made
    /// explicit, options in a fixed order, `-` before the source path.
    /// `w:300/f:webp/a.jpg` and `resize:300:0:fit/format:webp/-/a.jpg` both give
    /// `rs:300:0:fit/f:webp/-/a.jpg`.
    public var canonical: String {
        var parts = operations.map(\.canonical)
        if !autorotate { parts.append("autorotate:0") }
        parts += output.canonicalSegments
        if let version { parts.append("cb:" + version) }
        parts.append("-")
        parts.append(sourcePath)
        return parts.joined(separator: "/")
    }

    /// The first resize, used by decoders to shrink on load: nil when another step comes first
    /// (`trim` is always first, so a trimmed request decodes at full size).
    public var leadingResize: ResizeOptions? {
        if case .resize(let r)? = operations.first { return r }
        return nil
    }
}
