import KilnModel

/// Reads sources through the disk cache: `cache.store = original` or `both` (Nuke's stored
/// items). The bytes read from the wrapped loader are stored as a disk entry keyed by the source
/// path and the source's identity (size, mtime, inode), and later loads of the same version take
/// them from there instead of reading the source again. For local files this saves little (the
/// page cache already holds them); it is what makes remote sources cheap, and it lets every
/// variant of one source be rendered from one read.
///
/// `open` opens the wrapped source (its `fstat` gives the identity, so a changed source has a new
/// key and a stale original is never used); `readAll()` then takes the stored original when there
/// is one, and otherwise reads the wrapped handle and stores what it read: no further `stat`. Originals share the disk cache's LRU, size limit and
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

    public func isLocal(_ path: String) -> Bool { wrapped.isLocal(path) }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        OpenedThroughCache(wrapped: try wrapped.open(path), disk: disk)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        let opened = try open(path)
        return SourceImage(path: path, data: try opened.readAll(), identity: opened.identity)
    }

}

extension CacheKey {
    /// The key of a source's bytes as read (`cache.store = original`/`both`). Its output token,
    /// `original`, is never the output token of a rendered result, so the two kinds cannot
    /// collide whatever the request.
    public static func original(sourcePath: String, identity: SourceIdentity) -> CacheKey {
        ofSource("original", sourcePath: sourcePath, identity: identity)
    }
}

extension ImagePipeline {
    /// This pipeline, reading its sources through `disk`: what the source stage's sharing makes of
    /// it (`PipelineStages.sourceSharing`; KilnOrigins: remote sources fetched once for all
    /// workers, their originals always kept), else local sources through `CachingSource` when
    /// `store` keeps originals. Itself when there is no disk cache, or nothing to keep.
    public func keepingOriginals(in disk: DiskCache?, store: CacheConfiguration.Store) -> ImagePipeline {
        guard let disk else { return self }
        var stages = self.stages
        let keep: (any SourceLoading) -> any SourceLoading = { store == .final ? $0 : CachingSource(wrapping: $0, disk: disk) }
        if let sharing = stages.sourceSharing {
            stages.source = sharing.sharing(keepLocal: keep, disk: disk, lockTimeout: cache?.lockTimeout ?? 10, shared: cache?.shared)
        } else {
            guard store != .final else { return self }
            stages.source = keep(stages.source)
        }
        return ImagePipeline(stages: stages, limits: limits, output: output, cache: cache)
    }
}

/// A source opened through `CachingSource`: the wrapped handle's identity; the stored original's
/// bytes when the disk cache has them, else the handle's, stored on the way.
final class OpenedThroughCache: OpenedSource {
    let wrapped: any OpenedSource
    let disk: any DataCaching

    init(wrapped: any OpenedSource, disk: any DataCaching) {
        self.wrapped = wrapped
        self.disk = disk
    }

    var path: String { wrapped.path }
    var identity: SourceIdentity { wrapped.identity }

    func readAll() throws(LoadError) -> [UInt8] {
        let key = CacheKey.original(sourcePath: path, identity: identity)
        if case .image(let original)? = disk.entry(for: key) { return original.data }
        let data = try wrapped.readAll()
        let entry = CachedImage.original(data, sourceModified: identity.mtimeSeconds, sourcePath: path)
        disk.store(.image(entry), for: key)
        return data
    }
}
