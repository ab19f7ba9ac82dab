import KilnModel
import Logging

/// One render for many requests: memory → disk → lock → disk again → shared store → render →
/// disk + memory (+ shared store, after the response).
///
/// A request that finds neither cache takes the key's render lock (`RenderLocking`, the disk
/// cache by default). Requests for the same key in other processes wait for it and then read the
/// entry the holder wrote (`COALESCED`). The holder announces in the lock how long it may render
/// (`renderTimeout`, the deadline past which its master kills it): a waiter keeps waiting while
/// the holder is alive (its `flock` is held) and within that deadline, however long the render
/// takes, and takes over only when the holder died (the kernel released its lock) or passed its
/// deadline. Without an announced deadline a waiter gives up after `lockTimeout` and renders too. A render that fails in a
/// way every later request would too (`PipelineFailure.Kind.isRememberable`: not found, corrupt,
/// too large…) is stored as a short-lived negative entry, so the waiters and the next requests
/// get the same failure without rendering; an internal failure is not remembered, and the next
/// waiter renders itself. A holder killed with SIGKILL loses its lock with its life, and the next
/// waiter renders.
///
/// A failure of the source itself (`SourceFault`: damaged, not an image, over a limit for every
/// variant, its decode killed at the render deadline) is stored under the source's key instead
/// (`CacheKey.sourceFailures`, given to `fetch` as `source`), which every variant of that source
/// version looks up before rendering: 100 sizes of one bad file cost one attempt.
///
/// With a shared result store (`shared`, `cache.shared`), a request that holds the render lock
/// and still finds nothing on disk asks the store before rendering: the lock covers that read
/// too, so concurrent requests for one variant on one host make one store lookup (the others wait
/// and read the disk entry it wrote: `COALESCED`). A hit is kept on disk and in memory
/// (`HIT-SHARED`); a render is enqueued for the store (`SharedCaching.enqueue`), written by
/// `flushShared` after the response; failures never go there (`RenderCoordinator+Shared.swift`).
///
/// Every failure leaves as a `PipelineFailure`; a remembered one says where it came from (`outcome`).
/// Without a disk cache there are no locks: memory → shared store → render → memory.
/// Not thread-safe: one per worker process. `ImagePipeline` owns one.
public final class RenderCoordinator {
    public let memory: any ImageCaching
    public let disk: (any DataCaching)?
    /// Who renders a key; nil renders without coordination.
    public let locks: (any RenderLocking)?
    /// Where a source's decode marker is taken (`decoding`); nil: no markers.
    public let markers: (any RenderLocking)?
    /// The purge journal every worker reads when a request begins; nil: none.
    public let purges: PurgeJournal?
    /// The disk cache when it is Kiln's own (`init(memory:diskCache:…)`): what a source stage that
    /// keeps originals on disk works with (`ImagePipeline.keepingOriginals`).
    public private(set) var diskCache: DiskCache?
    /// Seconds to wait for another process rendering the same key when it announced no deadline.
    public let lockTimeout: Double
    /// Seconds a render may take before the master kills it (`limits.render_timeout`), announced
    /// in the render lock; 0: none announced.
    public let renderTimeout: Double
    /// Seconds a rememberable failure is remembered; 0 remembers none.
    public let negativeTTL: Double
    /// Whether rendered results are written to disk (`cache.store` is not `original`).
    public let storesFinal: Bool
    /// A lookup lane worker's (`server.lookup_workers`): answers from memory and the disk cache
    /// only; anything else (a miss, a render in progress elsewhere) is a `.renderElsewhere`
    /// failure that the HTTP layer hands to the render workers. Never renders, never waits on a
    /// render lock, never asks the shared store (the render worker does).
    public var lookupOnly = false
    /// The second-level cache shared by the hosts of a fleet (`cache.shared`); nil: none.
    public let shared: (any SharedCaching)?
    let logger: Logger
    let now: () -> Int64
    /// When the current request began (wall clock, ms; `requestBegan()`), plus the time it waited
    /// for render locks: the base of the render deadline announced in decode markers.
    var requestStarted: Int64 = 0
    /// The current fetch's source digest (`fetch(_:source:observer:sourceDigest:render:)`), asked
    /// at most once, when the shared store is reached; its key for the store once asked.
    var sourceDigest: (() -> String?)?
    var sharedKeyOfFetch: CacheKey?
    /// The reads and writes of the current fetch (`cache.read`, `cache.write`, `store.read`), for
    /// its trace (`takeIntervals`).
    var intervals: [Timeline.Interval] = []
    /// Failures remembered by this process (hex → failure), so a bad URL costs no file read.
    var failures: [String: (failure: PipelineFailure, expires: Int64)] = [:]
    private static let failureMemoLimit = 512

    /// Each role of the disk tier is its own dependency: `disk` (the entries), `locks` (who renders
    /// a key), `markers` (a source's decode marker: `decoding`) and `purges` (the purge journal,
    /// `RenderCoordinator+Purges.swift`); nil goes without. `DiskCache` plays all four
    /// (`init(memory:diskCache:…)`).
    public init(memory: any ImageCaching, disk: (any DataCaching)?, locks: (any RenderLocking)? = nil,
                markers: (any RenderLocking)? = nil, purges: PurgeJournal? = nil,
                lockTimeout: Double = 10, renderTimeout: Double = 0, negativeTTL: Double = 10,
                storesFinal: Bool = true, shared: (any SharedCaching)? = nil, logger: Logger,
                now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds) {
        self.memory = memory
        self.disk = disk
        self.locks = locks
        self.markers = markers
        self.purges = purges
        self.diskCache = nil
        self.lockTimeout = lockTimeout
        self.renderTimeout = renderTimeout
        self.negativeTTL = negativeTTL
        self.storesFinal = storesFinal
        self.shared = shared
        self.logger = logger
        self.now = now
    }

    /// Kiln's own disk cache in every role of the disk tier: entries, render locks (unless
    /// `locks` stands in for them), decode markers and the purge journal.
    public convenience init(memory: any ImageCaching, diskCache: DiskCache?, locks: (any RenderLocking)? = nil,
                            lockTimeout: Double = 10, renderTimeout: Double = 0, negativeTTL: Double = 10,
                            storesFinal: Bool = true, shared: (any SharedCaching)? = nil, logger: Logger,
                            now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds) {
        self.init(memory: memory, disk: diskCache, locks: locks ?? diskCache, markers: diskCache, purges: diskCache?.purges,
                  lockTimeout: lockTimeout, renderTimeout: renderTimeout, negativeTTL: negativeTTL, storesFinal: storesFinal,
                  shared: shared, logger: logger, now: now)
        self.diskCache = diskCache
    }

    /// The caches of a configuration: a `MemoryCache`, and a `DiskCache` when `disk_path` is set.
    /// Temporary files left by writers that died are removed at once. `shared`: the shared result store.
    public convenience init(_ configuration: CacheConfiguration, renderTimeout: Double = 0, shared: (any SharedCaching)? = nil,
                            logger: Logger) {
        let disk = DiskCache(configuration, logger: logger)
        disk?.removeAbandonedTemps()
        self.init(memory: MemoryCache(configuration), diskCache: disk,
                  lockTimeout: configuration.lockTimeout, renderTimeout: renderTimeout, negativeTTL: configuration.negativeTTL,
                  storesFinal: configuration.storesFinal, shared: shared, logger: logger)
    }

    /// The result for `key`, from a cache or from `render` (called at most once, and only when no
    /// cache has the key and no other process rendered it meanwhile). `observer` hears the
    /// `wait` (render lock) and `store` stages and may stop the request there.
    ///
    /// `source` (`CacheKey.sourceFailures` of the request's source version) is looked up for a
    /// remembered failure of the source before anything is rendered, and a `SourceFault` thrown by
    /// `render` is stored under it (this process also remembers it under `key`).
    ///
    /// Throws a `PipelineFailure` (any error of `render` is converted): with `outcome` when it
    /// was remembered (`.miss` when this render's failure was just stored), without when it is
    /// not remembered (internal failures, `negativeTTL` 0).
    ///
    /// `sourceDigest`: the SHA-256 of a local file source's bytes, asked only when the shared store
    /// is reached (its key then names the content: `CacheKey.sharing(sourceDigest:)`).
    public func fetch(_ key: CacheKey, source: CacheKey? = nil, observer: (any RenderObserving)? = nil,
                      sourceDigest: (() -> String?)? = nil,
                      render: () throws -> CachedImage) throws(PipelineFailure) -> (CachedImage, CacheOutcome) {
        intervals.removeAll(keepingCapacity: true)
        if let image = memory[key] { return (image, .hitMemory) }
        self.sourceDigest = sourceDigest
        sharedKeyOfFetch = nil
        defer {
            self.sourceDigest = nil
            sharedKeyOfFetch = nil
        }
        for k in [key, source].compactMap({ $0 }) {
            guard let f = failures[k.hex] else { continue }
            if f.expires > now() { throw f.failure.with(outcome: .hitMemory) }
            failures[k.hex] = nil
        }
        guard let disk else {
            if lookupOnly { throw RenderCoordinator.renderElsewhere }
            return try sharedOrRender(key, source, render, observer)
        }
        if let hit = try lookUp(key, in: disk, outcome: .hitDisk) { return hit }
        if let source { try lookUpSourceFailure(source, in: disk, outcome: .hitDisk) }
        if lookupOnly { throw RenderCoordinator.renderElsewhere }
        // Without stored results (`cache.store = original`) a waiter would find nothing to read
        // and render after the holder anyway: no lock, the renders run side by side.
        guard storesFinal, let locks else { return try sharedOrRender(key, source, render, observer) }

        try observer?.enter(.wait)
        let asked = now()
        switch locks.lock(key, timeout: lockTimeout) {
        case let .acquired(lock, waited):
            defer { lock.release() }
            observer?.lockTaken(waited: waited)
            // The wait is taken off the request's clock (as the master does): so is the deadline.
            if waited { requestStarted += max(0, now() - asked) }
            if renderTimeout > 0 { lock.announce(until: now() + Int64((renderTimeout + 1) * 1000)) }
            // Another process may have finished between the first look and the lock.
            if let hit = try lookUp(key, in: disk, outcome: waited ? .coalesced : .hitDisk) { return hit }
            if waited, let source { try lookUpSourceFailure(source, in: disk, outcome: .coalesced) }
            if let hit = lookUpShared(key, observer) { return hit }
            if waited { try observer?.enter(.wait, detail: "took over") }
            return try renderAndStore(key, source, render, observer)
        case .timedOut:
            observer?.lockTaken(waited: true)
            if let hit = try lookUp(key, in: disk, outcome: .coalesced) { return hit }
            if let source { try lookUpSourceFailure(source, in: disk, outcome: .coalesced) }
            logger.warning("render of \(key.sourcePath) still locked by another process past its deadline (or \(lockTimeout) s without one); rendering here too")
            return try sharedOrRender(key, source, render, observer)
        case .unavailable:
            observer?.lockTaken(waited: false)
            return try sharedOrRender(key, source, render, observer)
        }
    }

    static let renderElsewhere = PipelineFailure(.renderElsewhere, "not cached: for a render worker")

    /// Starts a background sweep of the disk cache when this process wrote enough since the last
    /// one; returns what finished sweeps did. Call it after the response was sent.
    @discardableResult
    public func maybeSweep() -> SweepStats? { disk?.maybeSweep() }

    /// Waits for a running background sweep (before the process exits); what it did.
    public func finishSweep(timeout: Double) -> SweepStats? { disk?.finishSweep(timeout: timeout) }

    /// The intervals the last `fetch` recorded, handed over once.
    public func takeIntervals() -> [Timeline.Interval] {
        defer { intervals.removeAll(keepingCapacity: true) }
        return intervals
    }

    /// Runs `body`, recording it as the interval `name` of the current fetch.
    @discardableResult
    func timed<T, E: Error>(_ name: String, _ body: () throws(E) -> T) throws(E) -> T {
        let start = Timeline.now()
        defer { intervals.append(Timeline.Interval(name: name, start: start, end: Timeline.now())) }
        return try body()
    }

    private func lookUp(_ key: CacheKey, in disk: any DataCaching, outcome: CacheOutcome) throws(PipelineFailure) -> (CachedImage, CacheOutcome)? {
        switch timed("cache.read", { disk.entry(for: key) }) {
        case nil:
            return nil
        case .image(let image)?:
            memory[key] = image
            return (image, outcome)
        case let .failure(failure, expires)?:
            remember(key, failure, expires: expires)
            throw failure.with(outcome: outcome)
        }
    }

    func renderAndStore(_ key: CacheKey, _ source: CacheKey?, _ render: () throws -> CachedImage,
                                _ observer: (any RenderObserving)?) throws(PipelineFailure) -> (CachedImage, CacheOutcome) {
        let image: CachedImage
        do {
            image = try render()
            // The work is done: keep it for the next request even if this client left.
            try? observer?.enter(.store)
        } catch {
            // Not remembered: no outcome, as nothing about it involves the caches.
            let failure = PipelineFailure(error)
            guard negativeTTL > 0, failure.kind.isRememberable else { throw failure }
            let expires = now() + Int64(negativeTTL * 1000)
            let stored = PipelineFailure(failure.kind, failure.message)
            // A failure of the source is stored once, under the source's key, which every variant
            // (and a waiter for this one) looks up.
            let sourceKey = error is SourceFault ? source : nil
            disk?.store(.failure(stored, expires: expires), for: sourceKey ?? key)
            remember(key, stored, expires: expires)
            if let sourceKey {
                remember(sourceKey, stored, expires: expires)
                logger.debug("remembering the failure of source \(key.sourcePath) for every variant for \(negativeTTL) s: \(stored.message)")
            }
            throw failure.with(outcome: .miss)
        }
        if storesFinal, let disk { timed("cache.write") { disk.store(.image(image), for: key) } }
        memory[key] = image
        if let shared { shared.enqueue(image, for: sharedKey(key)) }
        return (image, .miss)
    }

    func remember(_ key: CacheKey, _ failure: PipelineFailure, expires: Int64) {
        if failures.count >= RenderCoordinator.failureMemoLimit {
            let t = now()
            failures = failures.filter { $0.value.expires > t }
            if failures.count >= RenderCoordinator.failureMemoLimit { failures.removeAll() }
        }
        failures[key.hex] = (failure, expires)
    }
}
