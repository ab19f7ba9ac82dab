import KilnModel

/// Builds the pipeline's source stage over the local files: the seam through which another layer
/// (KilnOrigins: remote HTTP and S3 sources) adds sources without the pipeline knowing them.
/// Without a builder the stage is the local `FileSource` alone.
public protocol SourceStageBuilding: Sendable {
    /// The source stage reading `local` and whatever this builder adds, what reports its remote
    /// reads and what shares them (nil: none). `renderTimeout` (`limits.render_timeout`) bounds remote reads.
    func sourceStage(local: any SourceLoading, renderTimeout: Double) throws(ConfigError) -> BuiltSourceStage
}

/// What a `SourceStageBuilding` made: the stage, what reports its remote reads, and what keeps
/// those reads on disk for every worker (nil: the pipeline's default, `CachingSource` when
/// `cache.store` keeps originals).
public struct BuiltSourceStage {
    public var source: any SourceLoading
    public var activity: (any SourceActivity)?
    public var sharing: (any SourceSharing)?

    public init(source: any SourceLoading, activity: (any SourceActivity)? = nil, sharing: (any SourceSharing)? = nil) {
        self.source = source
        self.activity = activity
        self.sharing = sharing
    }
}

/// Keeps a built source stage's reads in the disk cache for every worker of a host, and in the
/// shared store for the fleet (KilnOrigins: one fetch per remote source).
public protocol SourceSharing {
    /// The stage reading through `disk`. `keepLocal` wraps a local source as the pipeline's
    /// default would; `lockTimeout` is `cache.lock_timeout`; `shared` is the pipeline's shared
    /// result store (`cache.shared`), where it may keep what it fetched for the other hosts.
    func sharing(keepLocal: (any SourceLoading) -> any SourceLoading, disk: DiskCache, lockTimeout: Double,
                 shared: (any SharedCaching)?) -> any SourceLoading
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
