import KilnModel
import Glibc

/// `[cache]`: the memory cache of each worker and the disk cache shared by all workers (and by
/// every `kiln serve` on the host that uses the same folder).
public struct CacheConfiguration: ConfigSection, Equatable {
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

    /// Encoded bytes the memory cache of one worker may hold; 0 turns the memory cache off.
    public var memoryCostLimit = Key.memoryCostLimit.defaultValue
    /// Entries the memory cache of one worker may hold; 0 turns the memory cache off.
    public var memoryCountLimit = Key.memoryCountLimit.defaultValue
    /// Seconds a memory entry lives after it was stored, hit or not. Keys change when the source
    /// changes, so this is not about staleness (purges reach the memory through the purge
    /// journal, `PurgeJournal`): it frees memory that is no longer used. 0 means no age limit.
    public var memoryTTL: Double = Key.memoryTTL.defaultValue
    /// Absolute path of the disk cache folder, created when missing. Empty: no disk cache, and
    /// then no coalescing across workers either (the locks live there).
    public var diskPath = Key.diskPath.defaultValue
    /// Bytes of entries (file sizes) before the sweep evicts.
    public var diskSizeLimit = Key.diskSizeLimit.defaultValue
    /// A sweep evicts least recently used entries down to this fraction of `diskSizeLimit`.
    public var diskLowWater = Key.diskLowWater.defaultValue
    /// How long a request waits for another process rendering the same key before rendering
    /// itself; 0 never waits.
    public var lockTimeout: Double = Key.lockTimeout.defaultValue
    /// How long a failed render (4xx) is remembered; 0 remembers none.
    public var negativeTTL: Double = Key.negativeTTL.defaultValue
    /// What the disk cache keeps.
    public var store: Store = Key.store.defaultValue

    /// The `[cache]` keys: the one place their names, types, defaults and ranges are written.
    public enum Key {
        public static let memoryCostLimit = Setting.size("cache.memory_cost_limit", default: 64 << 20, in: 0...(1 << 40),
                                                         doc: "encoded bytes each worker keeps in memory (0: memory cache off)")
        public static let memoryCountLimit = Setting.count("cache.memory_count_limit", default: 1000, in: 0...10_000_000,
                                                           doc: "entries each worker keeps in memory (0: memory cache off)")
        public static let memoryTTL = Setting.duration("cache.memory_ttl", default: 600, in: 0...604_800,
                                                       doc: "how long a memory entry lives (0: no age limit)")
        public static let diskPath = Setting.text(
            "cache.disk_path", default: CacheConfiguration.defaultDiskPath, expected: "an absolute folder path, or empty for no disk cache",
            doc: "folder of the disk cache shared by all workers (and by every `kiln serve` on the host that names it), created when missing; empty: no disk cache and no cross-worker deduplication",
            check: { $0.isEmpty || $0.hasPrefix("/") })
            .defaultText("`$CACHE_DIRECTORY` (systemd's `CacheDirectory=`), else `kiln-cache` in the working folder")
        public static let diskSizeLimit = Setting.size("cache.disk_size_limit", default: 1 << 30, in: (1 << 20)...(1 << 50),
                                                       doc: "bytes of entries before the sweep evicts least recently used ones")
        public static let diskLowWater = Setting.fraction("cache.disk_low_water", default: 0.9, in: 0.1...1.0,
                                                          doc: "the sweep evicts down to this fraction of the limit")
        public static let lockTimeout = Setting.duration("cache.lock_timeout", default: 10, in: 0...300,
                                                         doc: "how long a request waits for another process rendering the same variant (0: never)")
        public static let negativeTTL = Setting.duration("cache.negative_ttl", default: 10, in: 0...3600,
                                                         doc: "how long a failed render (4xx) is remembered (0: not at all)")
        public static let store = Setting<Store>.choice(
            "cache.store", default: .final,
            doc: "what the disk cache keeps: `final` (rendered results), `original` (source bytes as read, keyed by path and version: every variant of a source is rendered from one read; results stay in memory only) or `both`")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.memoryCostLimit) { $0.memoryCostLimit = $1 },
        ConfigField(Key.memoryCountLimit) { $0.memoryCountLimit = $1 },
        ConfigField(Key.memoryTTL) { $0.memoryTTL = $1 },
        ConfigField(Key.diskPath) { c, path in
            var p = path
            while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
            c.diskPath = p
        },
        ConfigField(Key.diskSizeLimit) { $0.diskSizeLimit = $1 },
        ConfigField(Key.diskLowWater) { $0.diskLowWater = $1 },
        ConfigField(Key.lockTimeout) { $0.lockTimeout = $1 },
        ConfigField(Key.negativeTTL) { $0.negativeTTL = $1 },
        ConfigField(Key.store) { $0.store = $1 },
    ]

    public init() {}

    /// The disk cache's folder when no setting names one: the first folder of `$CACHE_DIRECTORY`
    /// (set by systemd for a unit with `CacheDirectory=kiln`), else `kiln-cache` in the working
    /// folder. Workers are spawned with the master's environment and working folder, so every
    /// process of one server resolves the same folder.
    public static var defaultDiskPath: String {
        if let raw = getenv("CACHE_DIRECTORY"), let first = String(validatingCString: raw)?.split(separator: ":").first, first.hasPrefix("/") {
            return String(first)
        }
        guard let cwd = getcwd(nil, 0) else { return "" }
        defer { free(cwd) }
        let folder = String(cString: cwd)
        return folder == "/" ? "/kiln-cache" : folder + "/kiln-cache"
    }

    /// Whether the disk cache is the default one (no setting named a folder).
    public var diskPathIsDefault: Bool { diskPath == Key.diskPath.defaultValue }

    /// Whether there is a disk cache at all.
    public var diskEnabled: Bool { !diskPath.isEmpty }
    /// Whether rendered results go to disk.
    public var storesFinal: Bool { store != .original }
    /// Whether source bytes go to disk (`CachingSource`).
    public var storesOriginals: Bool { store != .final }
}
