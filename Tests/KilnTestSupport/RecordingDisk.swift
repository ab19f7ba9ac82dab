import Foundation
import KilnModel
import KilnPipeline

/// The double of `DataCaching` (the disk cache): entries in memory, by key, and a log of what was
/// asked of it: `disk.entry`, `disk.store`, `disk.store.failure`, `disk.remove`. A `StandInLock`
/// made over it writes `lock` and `release` into the same log, as `DiskCache` is both the disk
/// cache and the render lock, so a test sees the order of cache reads, locks and stores.
/// Never sweeps. Thread-safe.
public final class RecordingDisk: DataCaching, @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String: CacheEntry] = [:]
    private var calls: [String] = []

    public init() {}

    /// The entries by key (`CacheKey.hex`); a test may plant or remove entries.
    public var entries: [String: CacheEntry] {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    /// What was asked, in order; a test may clear it.
    public var log: [String] {
        get { lock.withLock { calls } }
        set { lock.withLock { calls = newValue } }
    }

    /// Appends `event` to the log.
    public func record(_ event: String) {
        lock.withLock { calls.append(event) }
    }

    public func entry(for key: CacheKey) -> CacheEntry? {
        lock.withLock {
            calls.append("disk.entry")
            return stored[key.hex]
        }
    }

    @discardableResult
    public func store(_ entry: CacheEntry, for key: CacheKey) -> Bool {
        lock.withLock {
            if case .failure = entry { calls.append("disk.store.failure") } else { calls.append("disk.store") }
            stored[key.hex] = entry
            return true
        }
    }

    public func removeEntry(for key: CacheKey) {
        lock.withLock {
            calls.append("disk.remove")
            stored[key.hex] = nil
        }
    }

    public func maybeSweep() -> SweepStats? { nil }
    public func finishSweep(timeout: Double) -> SweepStats? { nil }
}
