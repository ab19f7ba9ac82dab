import KilnModel

/// A cache shared by every host of a fleet, behind the memory and disk caches of each
/// (`cache.shared`: KilnOrigins' `SharedResultStore` on an S3-compatible object store).
///
/// `RenderCoordinator` looks a key up after the memory and disk caches missed and after it took
/// the key's render lock and found nothing on disk again (so the workers of one host that want the
/// same variant make one lookup), hands every result it rendered to `enqueue`, and the pipeline
/// calls `flush` once the response is written (`ImagePipeline.afterResponse`): writing never
/// delays an answer.
///
/// Fail-open: an implementation never throws. A store that is slow, down or refusing answers
/// `.failed` and is then `.skipped` for a while; the request is answered from a render as if
/// there were no shared tier.
public protocol SharedCaching: AnyObject {
    /// The result stored for `key` (`CacheKey.sharedHex`), verified; bounded in time.
    func lookUp(_ key: CacheKey) -> SharedLookup
    /// Keeps `image`, rendered for `key`, to be written by the next `flush`.
    func enqueue(_ image: CachedImage, for key: CacheKey)
    /// Writes what was enqueued (each write bounded in time and size); one outcome per entry.
    func flush() -> [SharedWrite]
    /// The original of the remote source `sourcePath` kept for the fleet, verified; nil: none
    /// (`SharedOriginal.swift`).
    func original(sourcePath: String) -> SharedOriginal?
    /// Keeps a remote source's whole download, to be written by the next `flush`.
    func enqueueOriginal(_ original: SharedOriginal, sourcePath: String)
}

/// What a shared lookup found.
public enum SharedLookup: Sendable, Equatable {
    /// A stored result that passed verification.
    case hit(CachedImage)
    /// Nothing stored for the key.
    case miss
    /// The store failed or did not answer in time, or what it answered was discarded (tampered
    /// with, truncated, of another key or format version): the one-line reason.
    case failed(String)
    /// Not asked: the store failed recently (`cache.shared_retry_after`).
    case skipped

    /// The `result` label of `kiln_shared_cache_reads_total`.
    public var label: String {
        switch self {
        case .hit: "hit"
        case .miss: "miss"
        case .failed: "error"
        case .skipped: "skipped"
        }
    }
}

/// What writing one enqueued result did.
public enum SharedWrite: Sendable, Equatable {
    /// Stored: that many body bytes.
    case written(Int)
    /// The store failed or did not answer in time: the one-line reason.
    case failed(String)
    /// Not written: larger than `cache.shared_max_bytes`, or the store failed recently.
    case skipped

    /// The `result` label of `kiln_shared_cache_writes_total`.
    public var label: String {
        switch self {
        case .written: "ok"
        case .failed: "error"
        case .skipped: "skipped"
        }
    }
}
