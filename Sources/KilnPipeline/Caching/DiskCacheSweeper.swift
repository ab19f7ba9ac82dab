import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// The sweep of a disk cache, as a value that any thread may run (`BackgroundSweep` runs it off the
/// request path): it only holds the folder and the limits, never the cache's open state.
///
/// One pass over the entries (`readdir` + `fstatat` per fan-out folder) keeps only totals and the
/// `maxBatch` least recently used entries (`OldestEntries`), so its memory does not grow with the
/// cache: a million entries are scanned in about 48 bytes × `maxBatch`. Eviction is exact LRU for
/// those; a sweep that stops at `maxBatch` says `overLimit` and the next one goes on.
public struct DiskCacheSweeper: Sendable {
    public let path: String
    public let sizeLimit: Int
    public let lowWater: Double
    /// Seconds after which unlocked lock files and temporary files are removed.
    public let staleAge: Double
    /// Entries of at most this size are read (header only) for expired failures.
    let failureProbeSize: Int
    /// Sweep as after a write that found the file system full (`fittingTheDisk`): the limit is
    /// what the entries take plus the space left (`statvfs`) when that is below `sizeLimit`, and
    /// entries are evicted to its low-water mark even when they are not over it.
    var diskFull = false

    /// This sweep, for a file system that ran out of space.
    func fittingTheDisk() -> DiskCacheSweeper {
        var s = self
        s.diskFull = true
        return s
    }

    var tempFolder: String { path + "/tmp" }
    var lockFolder: String { path + "/locks" }
    var sweepLockPath: String { path + "/sweep.lock" }

    /// Calls `body` with the folder name, file name and `lstat` of every entry file
    /// (`xx/<64 hex>`); temporary and lock files never match.
    func forEachEntry(_ body: (String, String, stat) -> Void) {
        for a in CacheFiles.list(path) ?? [] where CacheFiles.isHex(a, count: 2) {
            CacheFiles.forEachFile(in: "\(path)/\(a)") { name, st in
                guard CacheFiles.isHex(name, count: 64) else { return }
                body(a, name, st)
            }
        }
    }

    /// Removes expired failures, then least recently used entries until the entries take at most
    /// `lowWater × sizeLimit` (only when they take more than `sizeLimit`), at most `maxBatch`
    /// evictions per call; also stale lock files and temporary files that are stale or whose writer
    /// is gone. Temporary files still being written count toward the limit (`tempBytes`): entries
    /// are evicted to make room for them. `nowMs` is the wall clock in milliseconds (the clock of
    /// failures' expiry). Returns nil without doing anything when another process is sweeping
    /// (non-blocking lock on `sweep.lock`).
    public func sweep(maxBatch: Int, nowMs: Int64) -> SweepStats? {
        let start = Timeline.now()
        guard CacheFolderGuard.isUsable(path) else { return nil }
        let lockFD = open(sweepLockPath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
        guard lockFD >= 0 else { return nil }
        defer { close(lockFD) }
        guard flock(lockFD, LOCK_EX | LOCK_NB) == 0 else { return nil }

        var stats = SweepStats()
        let staleBefore = nowMs * 1_000_000 - Int64(staleAge * 1e9)
        let liveTempBytes = removeStaleTemps(before: staleBefore, maxBatch: maxBatch, &stats)
        removeStaleLocks(before: staleBefore, maxBatch: maxBatch, &stats)
        // Per-source side files (partial downloads, long-unused version records; not entries).
        stats.removedTemps += SourceSideFiles(path: path).removeStale(
            staleBefore: staleBefore, recordsBefore: nowMs * 1_000_000 - Int64(SourceSideFiles.recordAge * 1e9))

        // One pass: totals, expired failures removed, the oldest `maxBatch` entries kept.
        var oldest = OldestEntries(capacity: maxBatch)
        var count = 0
        var total = liveTempBytes
        forEachEntry { folder, name, st in
            let size = CacheFiles.diskUsage(st)
            let p = "\(path)/\(folder)/\(name)"
            if Int(st.st_size) <= failureProbeSize, DiskCache.isExpiredFailure(p, nowMs: nowMs), unlink(p) == 0 {
                stats.removedEntries += 1
                stats.removedBytes += size
                return
            }
            count += 1
            total += size
            let mtime = CacheFiles.mtime(st)
            if oldest.wouldKeep(mtime: mtime), let entryName = EntryName(name) {
                oldest.offer(.init(mtime: mtime, size: size, name: entryName))
            }
        }
        var limit = sizeLimit
        if diskFull, let free = Files.availableBytes(path) { limit = min(sizeLimit, total + free) }
        let target = Int(Double(limit) * lowWater)
        if total > limit || diskFull {
            for e in oldest.sortedOldestFirst() where total > target {
                let hex = e.name.hex
                let p = "\(path)/\(hex.prefix(2))/\(hex)"
                var st = stat()
                // Touched since the scan: recently used after all.
                guard lstat(p, &st) == 0, CacheFiles.mtime(st) == e.mtime, unlink(p) == 0 else { continue }
                total -= e.size
                count -= 1
                stats.removedEntries += 1
                stats.removedBytes += e.size
            }
            stats.overLimit = total > limit
        }
        stats.entries = count
        stats.bytes = total - liveTempBytes
        stats.milliseconds = Double(Timeline.now() - start) / 1e6
        return stats
    }

    /// Removes temporary files that are stale or whose writer is gone (at most `maxBatch`); returns
    /// the disk usage of those left (being written).
    private func removeStaleTemps(before staleBefore: Int64, maxBatch: Int, _ stats: inout SweepStats) -> Int {
        var staleTemps: [(path: String, size: Int)] = []
        var liveTemps: [Int] = []
        CacheFiles.forEachFile(in: tempFolder) { name, st in
            if CacheFiles.mtime(st) < staleBefore || DiskCache.isAbandonedTemp(name) {
                staleTemps.append(("\(tempFolder)/\(name)", CacheFiles.diskUsage(st)))
            } else {
                liveTemps.append(CacheFiles.diskUsage(st))
            }
        }
        for t in staleTemps.dropFirst(maxBatch) { liveTemps.append(t.size) }
        for t in staleTemps.prefix(maxBatch) where unlink(t.path) == 0 { stats.removedTemps += 1 }
        stats.tempFiles = liveTemps.count
        stats.tempBytes = liveTemps.reduce(0, +)
        return stats.tempBytes
    }

    /// Removes unlocked lock files older than `staleBefore` (at most `maxBatch`).
    private func removeStaleLocks(before staleBefore: Int64, maxBatch: Int, _ stats: inout SweepStats) {
        var staleLocks: [String] = []
        for a in CacheFiles.list(lockFolder) ?? [] where CacheFiles.isHex(a, count: 2) {
            let folder = "\(lockFolder)/\(a)"
            CacheFiles.forEachFile(in: folder) { name, st in
                if name.hasSuffix(".lock") && CacheFiles.mtime(st) < staleBefore { staleLocks.append("\(folder)/\(name)") }
            }
        }
        for p in staleLocks.prefix(maxBatch) {
            let fd = open(p, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard fd >= 0 else { continue }
            // Remove only while holding the lock, and only the file we locked (see RenderLock).
            if flock(fd, LOCK_EX | LOCK_NB) == 0, CacheFiles.isSameFile(fd, p), unlink(p) == 0 { stats.removedLocks += 1 }
            close(fd)
        }
    }
}
