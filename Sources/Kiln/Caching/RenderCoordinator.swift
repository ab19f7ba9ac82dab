import KilnCore
import Logging

/// One render for many requests: memory → disk → lock → disk again → render → disk + memory.
///
/// A request that finds neither cache takes the key's render lock. Requests for the same key in
/// other processes wait for it (up to `lockTimeout`) and then read the entry the holder wrote
/// (`COALESCED`). A render that fails with a client error is stored as a short-lived negative
/// entry, so the waiters and the next requests get the same error without rendering; a server
/// error (5xx) is not remembered, and the next waiter renders itself. A holder killed with
/// SIGKILL loses its lock with its life, and the next waiter renders.
///
/// Without a disk cache there are no locks: memory → render → memory.
/// Not thread-safe: one per worker process.
public final class RenderCoordinator {
    public let memory: any ImageCaching
    public let disk: (any DataCaching)?
    /// Seconds to wait for another process rendering the same key.
    public let lockTimeout: Double
    /// Seconds a client-error failure is remembered; 0 remembers none.
    public let negativeTTL: Double
    /// Whether rendered results are written to disk (`cache.store` is not `original`).
    public let storesFinal: Bool
    let logger: Logger
    let classify: (any Error) -> (status: Int, message: String)?
    let now: () -> Int64
    /// Failures remembered by this process (hex → failure), so a bad URL costs no file read.
    private var failures: [String: (status: Int, message: String, expires: Int64)] = [:]
    private static let failureMemoLimit = 512

    /// - Parameter classify: which render errors may be remembered, as an HTTP status and public
    ///   message (the handler's error mapping). Only 4xx are remembered; nil or 5xx rethrows the
    ///   error unchanged and nothing is stored.
    public init(memory: any ImageCaching, disk: (any DataCaching)?, lockTimeout: Double = 10, negativeTTL: Double = 10,
                storesFinal: Bool = true, logger: Logger,
                now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds,
                classify: @escaping (any Error) -> (status: Int, message: String)?) {
        self.memory = memory
        self.disk = disk
        self.lockTimeout = lockTimeout
        self.negativeTTL = negativeTTL
        self.storesFinal = storesFinal
        self.logger = logger
        self.now = now
        self.classify = classify
    }

    /// The caches of a configuration: a `MemoryCache`, and a `DiskCache` when `disk_path` is set.
    /// With `store = original` or `both`, give `disk` to `ImagePipeline.keepingOriginals` too.
    public convenience init(_ configuration: CacheConfiguration, logger: Logger,
                            classify: @escaping (any Error) -> (status: Int, message: String)?) {
        self.init(memory: MemoryCache(configuration), disk: DiskCache(configuration, logger: logger),
                  lockTimeout: configuration.lockTimeout, negativeTTL: configuration.negativeTTL,
                  storesFinal: configuration.storesFinal, logger: logger, classify: classify)
    }

    /// The result for `key`, from a cache or from `render` (called at most once, and only when no
    /// cache has the key and no other process rendered it meanwhile).
    ///
    /// Throws `RenderFailure` for a remembered or newly remembered client error, otherwise
    /// whatever `render` threw.
    public func fetch(_ key: CacheKey, render: () throws -> CachedImage) throws -> (CachedImage, CacheOutcome) {
        if let image = memory[key] { return (image, .hitMemory) }
        if let f = failures[key.hex] {
            if f.expires > now() { throw RenderFailure(status: f.status, message: f.message, outcome: .hitMemory) }
            failures[key.hex] = nil
        }
        guard let disk else { return try renderAndStore(key, render) }
        if let hit = try lookUp(key, in: disk, outcome: .hitDisk) { return hit }

        switch disk.lock(key, timeout: lockTimeout) {
        case let .acquired(lock, waited):
            defer { lock.release() }
            // Another process may have finished between the first look and the lock.
            if let hit = try lookUp(key, in: disk, outcome: waited ? .coalesced : .hitDisk) { return hit }
            return try renderAndStore(key, render)
        case .timedOut:
            if let hit = try lookUp(key, in: disk, outcome: .coalesced) { return hit }
            logger.warning("render of \(key.sourcePath) still locked by another process after \(lockTimeout) s; rendering here too")
            return try renderAndStore(key, render)
        case .unavailable:
            return try renderAndStore(key, render)
        }
    }

    /// Sweeps the disk cache when this process wrote enough since the last sweep. Call it after
    /// the response was sent (it may take tens of milliseconds when it sweeps).
    @discardableResult
    public func maybeSweep() -> SweepStats? { disk?.maybeSweep() }

    private func lookUp(_ key: CacheKey, in disk: any DataCaching, outcome: CacheOutcome) throws -> (CachedImage, CacheOutcome)? {
        switch disk.entry(for: key) {
        case nil:
            return nil
        case .image(let image)?:
            memory[key] = image
            return (image, outcome)
        case let .failure(status, message, expires)?:
            remember(key, status: status, message: message, expires: expires)
            throw RenderFailure(status: status, message: message, outcome: outcome)
        }
    }

    private func renderAndStore(_ key: CacheKey, _ render: () throws -> CachedImage) throws -> (CachedImage, CacheOutcome) {
        let image: CachedImage
        do {
            image = try render()
        } catch {
            guard negativeTTL > 0, let c = classify(error), (400...499).contains(c.status) else { throw error }
            let expires = now() + Int64(negativeTTL * 1000)
            disk?.store(.failure(status: c.status, message: c.message, expires: expires), for: key)
            remember(key, status: c.status, message: c.message, expires: expires)
            throw RenderFailure(status: c.status, message: c.message, outcome: .miss)
        }
        if storesFinal { disk?.store(.image(image), for: key) }
        memory[key] = image
        return (image, .miss)
    }

    private func remember(_ key: CacheKey, status: Int, message: String, expires: Int64) {
        if failures.count >= RenderCoordinator.failureMemoLimit {
            let t = now()
            failures = failures.filter { $0.value.expires > t }
            if failures.count >= RenderCoordinator.failureMemoLimit { failures.removeAll() }
        }
        failures[key.hex] = (status, message, expires)
    }
}
