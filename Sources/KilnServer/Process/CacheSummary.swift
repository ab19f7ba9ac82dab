import KilnModel
import KilnPipeline

/// The line the master logs at start and after each reload about the caches: the disk cache's
/// folder and size, or, in memory-only mode (`cache.disk_path = ""`), what that gives up, so an
/// operator who turned the disk cache off reads the cost in the log rather than in the CPU graph.
enum CacheSummary {
    static func line(_ values: ConfigValues) -> String {
        let caching: CacheConfiguration
        do {
            caching = try CacheConfiguration(values)
        } catch {
            return "caches: the cache settings do not load (\(error))"
        }
        return line(caching)
    }

    static func line(_ caching: CacheConfiguration) -> String {
        let memory = caching.memoryCostLimit == 0 || caching.memoryCountLimit == 0
            ? "memory cache off"
            : "memory cache \(ConfigUnits.formatSize(caching.memoryCostLimit)) per worker"
        guard caching.diskEnabled else {
            return "no disk cache (cache.disk_path is empty), \(memory): each worker renders every variant itself, "
                + "nothing is shared between workers or kept across restarts, concurrent requests for one variant are not coalesced, "
                + "and purges cannot reach the workers' memory (entries live until cache.memory_ttl)"
        }
        let origin = caching.diskPathIsDefault ? " (the default: set cache.disk_path to move it)" : ""
        return "disk cache \(caching.diskPath)\(origin), up to \(ConfigUnits.formatSize(caching.diskSizeLimit)), shared by every worker; \(memory)"
    }
}
