import KilnCore

/// `[cache]`: the memory cache of each worker and the disk cache shared by all workers (and by
/// every `kiln serve` on the host that uses the same folder).
public struct CacheConfiguration: Sendable, Equatable {
    /// What the disk cache keeps (Nuke's stored items). Every kind lives in `disk_path` under the
    /// same size limit and LRU sweep; without a disk cache the setting has no effect.
    public enum Store: String, Sendable, Equatable, CaseIterable {
        /// Rendered results (the default: local sources are cheap to read again).
        case final
        /// The source bytes as read, keyed by source path and version (`CachingSource`); every
        /// variant of a source is then rendered from one read of it. Rendered results are not
        /// written to disk (the disk folder still holds the render locks and negative entries,
        /// and each worker's memory cache still keeps results).
        case original
        /// Originals and rendered results.
        case both
    }

    /// `memory_cost_limit`: encoded bytes the memory cache of one worker may hold. Default 64MB;
    /// 0 turns the memory cache off.
    public var memoryCostLimit = 64 << 20
    /// `memory_count_limit`: entries the memory cache of one worker may hold. Default 1000;
    /// 0 turns the memory cache off.
    public var memoryCountLimit = 1000
    /// `memory_ttl`: seconds a memory entry lives after it was stored, hit or not. Default 600.
    /// Keys change when the source changes, so this is not about staleness: it bounds how long a
    /// worker keeps answering from memory after `kiln cache purge`. 0 means no age limit.
    public var memoryTTL: Double = 600
    /// `disk_path`: absolute path of the disk cache folder, created when missing. Default empty:
    /// no disk cache, and then no coalescing across workers either (the locks live there).
    public var diskPath = ""
    /// `disk_size_limit`: bytes of entries (file sizes) before the sweep evicts. Default 1GB.
    public var diskSizeLimit = 1 << 30
    /// `disk_low_water`: a sweep evicts least recently used entries down to this fraction of
    /// `disk_size_limit`. `0.9` or `90%`. Default 0.9.
    public var diskLowWater = 0.9
    /// `lock_timeout`: how long a request waits for another process rendering the same key before
    /// rendering itself. Default 10s; 0 never waits.
    public var lockTimeout: Double = 10
    /// `negative_ttl`: how long a failed render (4xx) is remembered. Default 10s; 0 remembers none.
    public var negativeTTL: Double = 10
    /// `store`: what the disk cache keeps: `final` (rendered results), `original` (source bytes,
    /// so every variant of a source is rendered from one read) or `both`. Default `final`.
    public var store: Store = .final

    public static let keys: Set<String> = [
        "cache.memory_cost_limit", "cache.memory_count_limit", "cache.memory_ttl", "cache.disk_path",
        "cache.disk_size_limit", "cache.disk_low_water", "cache.lock_timeout", "cache.negative_ttl", "cache.store",
    ]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        memoryCostLimit = try v.bytes("cache.memory_cost_limit", default: memoryCostLimit, in: 0...(1 << 40))
        memoryCountLimit = try v.int("cache.memory_count_limit", default: memoryCountLimit, in: 0...10_000_000)
        memoryTTL = try v.seconds("cache.memory_ttl", default: memoryTTL, in: 0...604_800)
        diskPath = v.string("cache.disk_path", default: diskPath)
        if !diskPath.isEmpty && !diskPath.hasPrefix("/") {
            throw .invalid(key: "cache.disk_path", value: diskPath, expected: "an absolute folder path, or empty for no disk cache",
                           origin: v.origins["cache.disk_path"] ?? "")
        }
        while diskPath.count > 1 && diskPath.hasSuffix("/") { diskPath.removeLast() }
        diskSizeLimit = try v.bytes("cache.disk_size_limit", default: diskSizeLimit, in: (1 << 20)...(1 << 50))
        if let raw = v.string("cache.disk_low_water") {
            let percent = raw.hasSuffix("%")
            guard let n = Double(percent ? String(raw.dropLast()) : raw).map({ percent ? $0 / 100 : $0 }),
                  (0.1...1.0).contains(n) else {
                throw .invalid(key: "cache.disk_low_water", value: raw, expected: "a fraction within 0.1...1 such as 0.9 or 90%",
                               origin: v.origins["cache.disk_low_water"] ?? "")
            }
            diskLowWater = n
        }
        lockTimeout = try v.seconds("cache.lock_timeout", default: lockTimeout, in: 0...300)
        negativeTTL = try v.seconds("cache.negative_ttl", default: negativeTTL, in: 0...3600)
        if let raw = v.string("cache.store") {
            guard let s = Store(rawValue: raw.lowercased()) else {
                throw .invalid(key: "cache.store", value: raw, expected: "final, original or both", origin: v.origins["cache.store"] ?? "")
            }
            store = s
        }
    }

    /// Whether there is a disk cache at all.
    public var diskEnabled: Bool { !diskPath.isEmpty }
    /// Whether rendered results go to disk.
    public var storesFinal: Bool { store != .original }
    /// Whether source bytes go to disk (`CachingSource`).
    public var storesOriginals: Bool { store != .final }
}
