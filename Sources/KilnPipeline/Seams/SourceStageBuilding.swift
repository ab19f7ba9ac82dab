import KilnModel

/// Builds the pipeline's source stage over the local files: the seam through which another layer
/// (KilnOrigins: remote HTTP and S3 sources) adds sources without the pipeline knowing them.
/// Without a builder the stage is the local `FileSource` alone.
public protocol SourceStageBuilding: Sendable {
    /// The source stage reading `local` and whatever this builder adds, and what reports its
    /// remote reads (nil: none). `renderTimeout` (`limits.render_timeout`) bounds remote reads.
    func sourceStage(local: any SourceLoading, renderTimeout: Double) throws(ConfigError) -> (any SourceLoading, (any SourceActivity)?)

    /// With a disk cache: the stage that keeps what `stage` (one this builder made) reads in
    /// `disk`, or nil to leave it to the pipeline's default (`CachingSource` when `cache.store`
    /// keeps originals). `keepLocal` wraps a local source as that default would; `lockTimeout` is
    /// `cache.lock_timeout`; `shared` is the pipeline's shared result store (`cache.shared`), where
    /// the builder may keep what it fetched for the other hosts of a fleet.
    func sharing(_ stage: any SourceLoading, keepLocal: (any SourceLoading) -> any SourceLoading,
                 disk: DiskCache, lockTimeout: Double, shared: (any SharedCaching)?) -> (any SourceLoading)?
}

/// What a source stage with remote reads reports: the pipeline names the time they took `fetch`
/// in a request's timeline and hands them on after each request.
public protocol SourceActivity: AnyObject, Sendable {
    /// Remote reads so far (compare two readings to see whether a stage read remotely).
    var count: Int { get }
    /// A request reached this worker now: its remote reads must end before its render deadline.
    func beginRequest()
    /// Hands the reads since the last call to `observer` (when it watches them: metrics).
    func report(to observer: (any RenderObserving)?)
}
