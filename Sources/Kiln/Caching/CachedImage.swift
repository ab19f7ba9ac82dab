import KilnCore

/// A rendered result as the caches keep it: the encoded bytes and what the HTTP answer needs.
public struct CachedImage: Sendable, Equatable {
    public var data: [UInt8]
    /// `Content-Type`, e.g. `image/webp`.
    public var contentType: String
    /// `ETag`, quoted as sent.
    public var etag: String
    /// `Last-Modified`: the source's modification time in whole seconds since the epoch.
    public var lastModified: Int64
    /// The source path relative to the root.
    public var sourcePath: String

    public init(data: [UInt8], contentType: String, etag: String, lastModified: Int64, sourcePath: String) {
        self.data = data
        self.contentType = contentType
        self.etag = etag
        self.lastModified = lastModified
        self.sourcePath = sourcePath
    }

    public init(_ rendered: RenderedImage, sourcePath: String) {
        self.init(data: rendered.data, contentType: rendered.format.mimeType, etag: rendered.etag,
                  lastModified: rendered.sourceIdentity.mtimeSeconds, sourcePath: sourcePath)
    }
}

/// Where an answer came from; `headerValue` is what `X-Cache` says.
public enum CacheOutcome: String, Sendable, Equatable {
    /// This worker's memory cache.
    case hitMemory = "HIT-MEMORY"
    /// The disk cache, without waiting.
    case hitDisk = "HIT-DISK"
    /// Rendered by this request.
    case miss = "MISS"
    /// Waited while another process (or worker) rendered it, then read its entry.
    case coalesced = "COALESCED"

    public var headerValue: String { rawValue }
}
