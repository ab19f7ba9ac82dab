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

/// A render that failed with a client error (4xx) and is remembered for `cache.negative_ttl`
/// seconds, so waiters and the next requests get the same answer without rendering again.
///
/// `RenderCoordinator.fetch` throws it both when its own render failed that way (`outcome`
/// `.miss`) and when it found a remembered failure (`.hitMemory`, `.hitDisk`, `.coalesced`).
public struct RenderFailure: Error, Sendable, Equatable {
    /// The HTTP status, 400...499.
    public var status: Int
    /// The public one-line reason.
    public var message: String
    public var outcome: CacheOutcome

    public init(status: Int, message: String, outcome: CacheOutcome) {
        self.status = status
        self.message = message
        self.outcome = outcome
    }
}

/// What a disk entry holds: a result, or a remembered failure.
public enum CacheEntry: Sendable, Equatable {
    case image(CachedImage)
    /// A failed render; valid until `expires` (wall clock, milliseconds since the epoch, so that
    /// all processes agree).
    case failure(status: Int, message: String, expires: Int64)
}
