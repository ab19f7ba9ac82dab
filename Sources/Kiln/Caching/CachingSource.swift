import KilnCore

/// Reads sources through the disk cache: `cache.store = original` or `both` (Nuke's stored
/// items). The bytes read from the wrapped loader are stored as a disk entry keyed by the source
/// path and the source's identity (size, mtime, inode), and later loads of the same version take
/// them from there instead of reading the source again. For local files this saves little (the
/// page cache already holds them); it is what makes remote sources cheap, and it lets every
/// variant of one source be rendered from one read.
///
/// `identity(of:)` always asks the wrapped loader (one `stat`): a changed source has a new key,
/// so a stale original is never used. Originals share the disk cache's LRU, size limit and
/// `purge(sourcePath:)` with rendered results. Storing is best effort: a full or read-only
/// cache folder only costs the caching (the disk cache warns once).
///
/// Not thread-safe (the disk cache is not): one per process, like the pipeline.
public final class CachingSource: SourceLoading {
    public let wrapped: any SourceLoading
    public let disk: any DataCaching

    public init(wrapping wrapped: any SourceLoading, disk: any DataCaching) {
        self.wrapped = wrapped
        self.disk = disk
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        try wrapped.identity(of: path)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        let identity = try wrapped.identity(of: path)
        if case .image(let original)? = disk.entry(for: CacheKey.original(sourcePath: path, identity: identity)) {
            return SourceImage(path: path, data: original.data, identity: identity)
        }
        let loaded = try wrapped.load(path)
        // Keyed by the identity of what was read (the file may have changed since the stat).
        let entry = CachedImage(data: loaded.data, contentType: CachingSource.contentType, etag: "",
                                lastModified: loaded.identity.mtimeSeconds, sourcePath: path)
        disk.store(.image(entry), for: CacheKey.original(sourcePath: path, identity: loaded.identity))
        return loaded
    }

    /// The content type recorded in original entries (the pipeline sniffs the bytes anyway).
    public static let contentType = "application/octet-stream"
}

extension CacheKey {
    /// The key of a source's bytes as read (`cache.store = original`/`both`). Its output token,
    /// `original`, is never the output token of a rendered result, so the two kinds cannot
    /// collide whatever the request.
    public static func original(sourcePath: String, identity: SourceIdentity) -> CacheKey {
        CacheKey(canonicalRequest: "original/" + sourcePath, outputFormat: "original", source: identity,
                 sourcePath: sourcePath)
    }
}

extension ImagePipeline {
    /// This pipeline, reading its sources through `disk` when `store` keeps originals; itself
    /// when it does not or when there is no disk cache.
    public func keepingOriginals(in disk: (any DataCaching)?, store: CacheConfiguration.Store) -> ImagePipeline {
        guard let disk, store != .final else { return self }
        var stages = self.stages
        stages.source = CachingSource(wrapping: stages.source, disk: disk)
        return ImagePipeline(stages: stages, limits: limits, output: output)
    }
}
