import KilnModel

/// A cache of entries shared by processes through the file system (Nuke's `DataCaching`).
/// `DiskCache` is the default; the pipeline only talks to this protocol.
public protocol DataCaching: AnyObject {
    /// The entry for `key`, nil when missing, unreadable, corrupt (then removed) or an expired failure.
    func entry(for key: CacheKey) -> CacheEntry?
    /// Stores atomically; false (after logging) when it could not, leaving nothing behind.
    @discardableResult func store(_ entry: CacheEntry, for key: CacheKey) -> Bool
    func removeEntry(for key: CacheKey)
    /// A cheap check after stores: starts a sweep off the request path when enough was written
    /// since the last one; returns what sweeps that finished since the last call did.
    @discardableResult func maybeSweep() -> SweepStats?
    /// Before the process exits: waits for a running sweep (at most `timeout` seconds) and returns
    /// what the unreported sweeps did.
    func finishSweep(timeout: Double) -> SweepStats?
}

/// What a disk entry holds: a result, or a remembered failure.
public enum CacheEntry: Sendable, Equatable {
    case image(CachedImage)
    /// A failed render, as the pipeline's own failure (kind and public message, no transport
    /// status); valid until `expires` (wall clock, milliseconds since the epoch, so that all
    /// processes agree).
    case failure(PipelineFailure, expires: Int64)
}
