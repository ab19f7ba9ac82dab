/// How a browser should present the answer (`Content-Disposition`, RFC 6266): the name to save
/// it under and whether to download it rather than show it.
///
/// `filename:<name>` (`fn`) and `attachment:<0|1>` (`att`) change headers, never bytes: they are
/// not part of `ImageRequest.canonical` (nor of the cache key), so every name shares the
/// variant's cache entry; the header is computed for each request from its own URL, and the
/// caches keep no name. The HTTP layer sanitises the name (`ContentDisposition`).
public struct DownloadOptions: Sendable, Hashable {
    /// The name as the URL gave it (percent-decoded, not yet sanitised); nil: the source's base
    /// name. Its extension is replaced by the output format's.
    public var filename: String?
    /// `attachment` instead of `inline`.
    public var attachment: Bool

    public init(filename: String? = nil, attachment: Bool = false) {
        self.filename = filename
        self.attachment = attachment
    }

    /// The longest name accepted in a URL, in bytes (the header keeps fewer characters).
    public static let maxFilenameBytes = 1024
}
