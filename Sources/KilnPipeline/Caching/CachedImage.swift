import KilnModel

/// A rendered result as the caches keep it: the encoded bytes, their format, their digest and
/// the version of the source they were made from.
public struct CachedImage: Sendable, Equatable {
    public var data: [UInt8]
    /// The encoded format; nil for a source's original bytes as read (`CacheKey.original`).
    public var format: ImageFormat?
    /// The result's identity (`RenderedImage.digest`: 32 hex digits); empty for originals.
    public var digest: String
    /// The source's modification time in whole seconds since the epoch.
    public var sourceModified: Int64
    /// The source path relative to the root.
    public var sourcePath: String
    /// `f:json`, `f:blurhash`, `f:thumbhash`: the bytes are that document (`format` is nil).
    public var document: DocumentKind?

    public init(data: [UInt8], format: ImageFormat?, digest: String, sourceModified: Int64, sourcePath: String,
                document: DocumentKind? = nil) {
        self.data = data
        self.document = document
        self.format = format
        self.digest = digest
        self.sourceModified = sourceModified
        self.sourcePath = sourcePath
    }

    public init(_ rendered: RenderedImage, sourcePath: String) {
        self.init(data: rendered.data, format: rendered.document == nil ? rendered.format : nil, digest: rendered.digest,
                  sourceModified: rendered.sourceIdentity.mtimeSeconds, sourcePath: sourcePath, document: rendered.document)
    }

    /// A source's bytes as read, kept as an original (`cache.store = original`/`both`).
    public static func original(_ data: [UInt8], sourceModified: Int64, sourcePath: String) -> CachedImage {
        CachedImage(data: data, format: nil, digest: "", sourceModified: sourceModified, sourcePath: sourcePath)
    }
}

/// Where an answer came from (the HTTP layer says it as `X-Cache`, metrics count it).
public enum CacheOutcome: String, Sendable, Equatable, CaseIterable {
    /// This worker's memory cache.
    case hitMemory
    /// The disk cache, without waiting.
    case hitDisk
    /// The shared result store (`cache.shared`), after both local caches missed.
    case hitShared
    /// Rendered by this request.
    case miss
    /// Waited while another process (or worker) rendered it, then read its entry.
    case coalesced
}
