import KilnModel

/// Purges reach every worker's memory through the disk cache's purge journal (`PurgeJournal`):
/// `DiskCache.purge(sourcePath:)` appends the source's tag, `purgeAll` replaces the file, and each
/// worker looks at it when a request begins (`requestBegan`, one `stat`). So once a purge
/// returned, the next request any worker sharing the folder takes no longer finds the purged
/// source in memory: no memory cache keeps a purged variant until `cache.memory_ttl`.
/// Without a disk cache there is nothing to purge and no journal.
extension RenderCoordinator {
    /// Drops from the memory cache the sources purged since the last look (the whole cache when the
    /// journal was replaced), and forgets the remembered failures (they do not name their source;
    /// a purge is rare).
    func dropPurgedSources() {
        guard let purges else { return }
        switch purges.changes() {
        case .none:
            return
        case .sources(let tags):
            let dropped = memory.removeAll { tags.contains(SourceTag(sourcePath: $0.sourcePath).hex) }
            failures.removeAll()
            logger.debug("purge journal: \(tags.count) sources purged, \(dropped) memory entries dropped")
        case .everything:
            memory.removeAll()
            failures.removeAll()
            logger.debug("purge journal replaced: memory cache emptied")
        }
    }
}
