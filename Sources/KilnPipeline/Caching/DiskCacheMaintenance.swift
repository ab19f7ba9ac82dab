import Glibc
import KilnModel
import KilnPOSIX

/// What a sweep did and left.
public struct SweepStats: Sendable, Equatable {
    /// Entries and bytes (disk usage, as `du` counts) left.
    public var entries = 0
    public var bytes = 0
    /// Entries evicted (least recently used first) or removed as expired failures.
    public var removedEntries = 0
    public var removedBytes = 0
    /// Unlocked lock files older than `staleAge`, and temporary files older than that or left by a
    /// writer that is gone, removed.
    public var removedLocks = 0
    public var removedTemps = 0
    /// Temporary files left (being written), and their disk usage (not in `bytes`): they count
    /// against the size limit while they exist (entries are evicted to make room for them).
    public var tempFiles = 0
    public var tempBytes = 0
    /// Still above the size limit because `maxBatch` stopped the eviction: sweep again.
    public var overLimit = false
    public var milliseconds = 0.0
}

/// The size of the disk cache, for `kiln cache stats`.
public struct DiskCacheStats: Sendable, Equatable {
    public var entries = 0
    /// Disk usage of the entries (allocated blocks, as `du` counts: at least a block per file).
    public var bytes = 0
    public var sizeLimit = 0
    /// Files being written (or left by a process that died while writing), and their disk usage
    /// (not in `bytes`; the sweep counts it against the size limit).
    public var tempFiles = 0
    public var tempBytes = 0
    public var lockFiles = 0
    /// Free bytes of the file system for unprivileged users (`statvfs`), nil when unknown.
    public var filesystemFreeBytes: Int?
}

extension DiskCache {
    struct ScannedEntry {
        var path: String
        /// Disk usage.
        var size: Int
        /// Length of the file.
        var length: Int
        /// Last recorded access, nanoseconds.
        var mtime: Int64
    }

    /// Every entry file (`xx/<64 hex>`); temporary and lock files never match. Holds them all in
    /// memory: for tests and small caches; the sweep and the statistics stream (`forEachEntry`).
    func scanEntries() -> [ScannedEntry] {
        var out: [ScannedEntry] = []
        sweeper.forEachEntry { folder, name, st in
            out.append(ScannedEntry(path: "\(path)/\(folder)/\(name)", size: CacheFiles.diskUsage(st), length: Int(st.st_size), mtime: CacheFiles.mtime(st)))
        }
        return out
    }

    /// The sweep of this cache as a value another thread may run (`BackgroundSweep`).
    public var sweeper: DiskCacheSweeper {
        DiskCacheSweeper(path: path, sizeLimit: sizeLimit, lowWater: lowWater, staleAge: staleAge, failureProbeSize: failureProbeSize)
    }

    /// Sweeps here and now (`DiskCacheSweeper.sweep`): `kiln cache sweep` and tests; servers sweep
    /// in the background (`maybeSweep`). Nil when another process is sweeping.
    public func sweep(maxBatch: Int = 10_000) -> SweepStats? {
        sweeper.sweep(maxBatch: maxBatch, nowMs: now())
    }

    /// Removes the temporary files whose writer is gone (a process killed while writing an entry),
    /// whatever their age: called when a worker starts, so a killed writer's leftovers do not wait
    /// `staleAge` for a sweep. Files of live writers stay. Logs what it removed.
    @discardableResult
    public func removeAbandonedTemps() -> (files: Int, bytes: Int) {
        guard folderUsable() else { return (0, 0) }
        var found: [(path: String, size: Int)] = []
        CacheFiles.forEachFile(in: tempFolder) { name, st in
            if DiskCache.isAbandonedTemp(name) {
                found.append(("\(tempFolder)/\(name)", CacheFiles.diskUsage(st)))
            }
        }
        var removed = (files: 0, bytes: 0)
        for t in found where unlink(t.path) == 0 {
            removed.files += 1
            removed.bytes += t.size
        }
        if removed.files > 0 {
            logger.notice("disk cache: removed \(removed.files) temporary files (\(removed.bytes) bytes) left in \(tempFolder) by writers that died")
        }
        return removed
    }

    /// Whether the temporary file `name` (`<hex16>.<pid>.<n>`, see `store`) was left by a process
    /// that no longer exists. A name without a pid, or a pid that is alive (this process, another
    /// thread's pipeline in `kiln warm`, or a process not ours to signal), is not abandoned; the
    /// sweep still removes such files after `staleAge` (a reused pid). Assumes the writers share
    /// this pid namespace.
    static func isAbandonedTemp(_ name: String) -> Bool {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let pid = pid_t(parts[1]), pid > 0, pid != getpid() else { return false }
        return kill(pid, 0) != 0 && Errno.current == ESRCH
    }

    /// Whether the file at `p` is a failure entry whose expiry has passed (reads its fixed header).
    static func isExpiredFailure(_ p: String, nowMs: Int64) -> Bool {
        let fd = open(p, Files.readRegularFlags)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var fixed = [UInt8](repeating: 0, count: EntryCodec.fixedSize)
        guard fixed.withUnsafeMutableBytes({ CacheFiles.readFully(fd, into: $0, offset: 0) }) == fixed.count,
              fixed[0...3].elementsEqual(EntryCodec.magic), fixed[6] == EntryCodec.kindFailure else { return false }
        var expires: Int64 = 0
        for i in 0..<8 { expires |= Int64(fixed[32 + i]) << (8 * Int64(i)) }
        return expires != 0 && expires <= nowMs
    }

    /// Entries, bytes and leftovers, without changing anything.
    public func stats() -> DiskCacheStats {
        var s = DiskCacheStats()
        sweeper.forEachEntry { _, _, st in
            s.entries += 1
            s.bytes += CacheFiles.diskUsage(st)
        }
        s.sizeLimit = sizeLimit
        CacheFiles.forEachFile(in: tempFolder) { _, st in
            s.tempFiles += 1
            s.tempBytes += CacheFiles.diskUsage(st)
        }
        for a in CacheFiles.list(lockFolder) ?? [] where CacheFiles.isHex(a, count: 2) {
            s.lockFiles += CacheFiles.list("\(lockFolder)/\(a)")?.count ?? 0
        }
        var vfs = statvfs()
        if statvfs(path, &vfs) == 0 { s.filesystemFreeBytes = Int(vfs.f_bavail) * Int(vfs.f_frsize) }
        return s
    }

    /// Removes every entry, and remote sources' version records and partial downloads (lock and
    /// temporary files stay: they belong to renders in progress), then replaces the purge journal
    /// (`PurgeJournal.reset`): every worker sharing the folder empties its memory cache when its
    /// next request begins.
    @discardableResult
    public func purgeAll() -> (entries: Int, bytes: Int) {
        var removed = (entries: 0, bytes: 0)
        guard folderUsable() else { return removed }
        SourceSideFiles(path: path).removeAll()
        sweeper.forEachEntry { folder, name, st in
            guard unlink("\(path)/\(folder)/\(name)") == 0 else { return }
            removed.entries += 1
            removed.bytes += CacheFiles.diskUsage(st)
        }
        if !PurgeJournal.reset(diskPath: path) {
            logger.warning("disk cache: cannot replace the purge journal \(PurgeJournal.path(diskPath: path)): \(Errno.text(Errno.current)); workers' memory caches keep their entries until cache.memory_ttl")
        }
        return removed
    }

    /// Removes every entry (results and failures) whose header names `sourcePath` (relative to
    /// the root, as in URLs); damaged entries are removed too, and a remote source's version
    /// record and partial download (the next request fetches it again). Then appends the source's
    /// tag to the purge journal (`PurgeJournal.record`): every worker sharing the folder drops the
    /// source from its memory cache when its next request begins.
    @discardableResult
    public func purge(sourcePath: String) -> (entries: Int, bytes: Int) {
        var removed = (entries: 0, bytes: 0)
        guard folderUsable() else { return removed }
        SourceSideFiles(path: path).remove(sourcePath: sourcePath)
        sweeper.forEachEntry { folder, name, entryStat in
            let p = "\(path)/\(folder)/\(name)"
            let fd = open(p, Files.readRegularFlags)
            guard fd >= 0 else { return }
            var st = stat()
            var matches = false
            if fstat(fd, &st) == 0 {
                switch DiskCache.read(fd, st, body: false) {
                case .found(let header, _): matches = header.sourcePath == sourcePath
                case .corrupt: matches = true
                case .missing: break
                }
            }
            close(fd)
            if matches, unlink(p) == 0 {
                removed.entries += 1
                removed.bytes += CacheFiles.diskUsage(entryStat)
            }
        }
        // After the entries are gone: a worker that reads the journal cannot find them on disk again.
        if !PurgeJournal.record(SourceTag(sourcePath: sourcePath), diskPath: path) {
            logger.warning("disk cache: cannot append to the purge journal \(PurgeJournal.path(diskPath: path)): \(Errno.text(Errno.current)); workers' memory caches keep \(sourcePath) until cache.memory_ttl")
        }
        return removed
    }
}
