import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

@Suite struct CachingDiskTests {
    typealias F = CachingFixtures

    func cache(_ path: String, limit: Int = 1 << 30, lowWater: Double = 0.9, recorder: LogRecorder = LogRecorder(),
               now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds) -> DiskCache {
        DiskCache(path: path, sizeLimit: limit, lowWater: lowWater, logger: F.logger(recorder), now: now)
    }

    @Test func roundTripInFanOutFolders() throws {
        let root = F.folder("rt")
        defer { F.remove(root) }
        let disk = cache(root)
        let key = F.key("rs:300:0:fit")
        let image = F.image(30_000)
        #expect(disk.entry(for: key) == nil)
        #expect(disk.store(.image(image), for: key))
        let hex = key.hex
        let expected = "\(hex.prefix(2))/\(hex)"
        #expect(F.files(under: root) == [expected])
        #expect(disk.entry(for: key) == .image(image))
        // Another process (instance) reads the same entry; an empty image works too.
        let other = cache(root)
        #expect(other.entry(for: key) == .image(image))
        let empty = F.key("empty")
        #expect(other.store(.image(F.image(0)), for: empty))
        #expect(disk.entry(for: empty) == .image(F.image(0)))
        disk.removeEntry(for: key)
        #expect(other.entry(for: key) == nil)
    }

    @Test func failuresRoundTripUntilTheyExpire() {
        let root = F.folder("neg")
        defer { F.remove(root) }
        let clock = ManualClock()
        let disk = cache(root, now: { clock.milliseconds })
        let key = F.key("bad")
        let expires = clock.milliseconds + 10_000
        #expect(disk.store(.failure(PipelineFailure(.corrupt, "corrupt image: premature end"), expires: expires), for: key))
        #expect(disk.entry(for: key) == .failure(PipelineFailure(.corrupt, "corrupt image: premature end"), expires: expires))
        clock.advance(seconds: 10)
        #expect(disk.entry(for: key) == nil)
        // A success replaces the failure atomically.
        #expect(disk.store(.image(F.image(100)), for: key))
        #expect(disk.entry(for: key) == .image(F.image(100)))
    }

    @Test func damagedEntriesAreMissesAndRemoved() throws {
        let root = F.folder("corrupt")
        defer { F.remove(root) }
        let recorder = LogRecorder()
        let disk = cache(root, recorder: recorder)
        let damage: [(String, (inout [UInt8]) -> Void)] = [
            ("truncated by one byte", { $0.removeLast() }),
            ("cut inside the header", { $0.removeSubrange(30...) }),
            ("body byte flipped", { $0[$0.count - 100] ^= 0x01 }),
            ("header string changed", { bytes in
                let i = bytes.firstIndex(of: UInt8(ascii: "/"))!   // inside the key text
                bytes[i] = UInt8(ascii: "_")
            }),
            ("bad magic", { $0[0] = 0 }),
            ("zeroed", { $0 = [UInt8](repeating: 0, count: $0.count) }),
            ("empty", { $0 = [] }),
        ]
        for (n, (what, change)) in damage.enumerated() {
            let key = F.key("variant\(n)")
            #expect(disk.store(.image(F.image(5000, seed: UInt8(n))), for: key))
            let p = disk.entryPath(key.hex)
            var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: p)))
            change(&bytes)
            try Data(bytes).write(to: URL(fileURLWithPath: p))
            #expect(disk.entry(for: key) == nil, "\(what)")
            #expect(!FileManager.default.fileExists(atPath: p), "\(what): damaged file still there")
        }
        #expect(recorder.messages(.warning).count == damage.count)
    }

    @Test func anEntryUnderAnotherKeysNameIsRejected() throws {
        let root = F.folder("swap")
        defer { F.remove(root) }
        let disk = cache(root)
        let a = F.key("a"), b = F.key("b")
        #expect(disk.store(.image(F.image(100)), for: a))
        try FileManager.default.createDirectory(atPath: (disk.entryPath(b.hex) as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: disk.entryPath(a.hex), toPath: disk.entryPath(b.hex))
        #expect(disk.entry(for: b) == nil)
        #expect(disk.entry(for: a) == .image(F.image(100)))
    }

    @Test func temporaryFilesAreNeverEntries() throws {
        let root = F.folder("tmp")
        defer { F.remove(root) }
        let disk = cache(root)
        for i in 0..<5 { #expect(disk.store(.image(F.image(1000, seed: UInt8(i))), for: F.key("k\(i)"))) }
        #expect(F.files(under: root + "/tmp").isEmpty)
        // A writer that died half way leaves a temporary file: not an entry, not counted.
        let key = F.key("half")
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: "\(root)/tmp/\(key.hex.prefix(16)).999999.1"))
        #expect(disk.entry(for: key) == nil)
        let stats = disk.stats()
        #expect(stats.entries == 5 && stats.tempFiles == 1)
        #expect(disk.scanEntries().count == 5 && disk.scanEntries().allSatisfy { !$0.path.hasPrefix(root + "/tmp/") })
    }

    @Test func failedStoresLeaveNothingAndWarnOnce() throws {
        let root = F.folder("blocked")
        defer { F.remove(root) }
        let recorder = LogRecorder()
        let disk = cache(root, recorder: recorder)
        let key = F.key("x")
        // The fan-out folder cannot be made: a file sits where it should be. The temporary file
        // was complete when the rename failed, and must be gone.
        try Data([0]).write(to: URL(fileURLWithPath: "\(root)/\(key.hex.prefix(2))"))
        #expect(!disk.store(.image(F.image(30_000)), for: key))
        #expect(!disk.store(.image(F.image(30_000)), for: key))
        #expect(F.files(under: root + "/tmp").isEmpty)
        #expect(disk.entry(for: key) == nil)
        #expect(recorder.messages(.warning).count == 1)
        #expect(recorder.messages(.debug).count == 1)
        // Other keys still work.
        #expect(disk.store(.image(F.image(10)), for: F.key("y")))
    }

    @Test func readOnlyFolderFailsSoft() throws {
        let root = F.folder("ro")
        defer { F.remove(root) }
        let recorder = LogRecorder()
        let disk = cache(root, recorder: recorder)
        let old = F.key("old")
        #expect(disk.store(.image(F.image(100)), for: old))
        try makeReadOnly(root)
        defer { undoReadOnly(root) }
        let before = F.files(under: root)
        let key = F.key("new")
        #expect(!disk.store(.image(F.image(30_000)), for: key))
        #expect(!disk.store(.failure(PipelineFailure(.notFound, "no"), expires: .max), for: F.key("other")))
        #expect(F.files(under: root) == before)
        #expect(recorder.messages(.warning).count == 1)
        #expect(disk.entry(for: old) == .image(F.image(100)))     // reading still works
        guard case .unavailable = disk.lock(key, timeout: 0) else {
            Issue.record("a lock in a read-only folder should be unavailable")
            return
        }
        // The coordinator still answers, uncached.
        let coordinator = RenderCoordinator(memory: MemoryCache(countLimit: 0), diskCache: disk, logger: F.quietLogger)
        let (image, outcome) = try coordinator.fetch(key) { F.image(77) }
        #expect(image == F.image(77) && outcome == .miss)
        #expect(F.files(under: root) == before)
        #expect(recorder.messages(.warning).count == 1)            // once per process, whatever failed
    }

    /// chmod does not stop root; the immutable attribute does.
    func makeReadOnly(_ root: String) throws {
        if geteuid() == 0 {
            for dir in [root, root + "/tmp", root + "/locks"] where FileManager.default.fileExists(atPath: dir) {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
                p.arguments = ["+i", dir]
                try p.run()
                p.waitUntilExit()
                try #require(p.terminationStatus == 0, "chattr +i failed")
            }
        } else {
            for dir in [root, root + "/tmp"] { chmod(dir, 0o555) }
        }
    }

    func undoReadOnly(_ root: String) {
        for dir in [root, root + "/tmp", root + "/locks"] where FileManager.default.fileExists(atPath: dir) {
            if geteuid() == 0 {
                let p = Process()
                p.executableURL = URL(fileURLWithPath: "/usr/bin/chattr")
                p.arguments = ["-i", dir]
                try? p.run()
                p.waitUntilExit()
            } else {
                chmod(dir, 0o755)
            }
        }
    }

    @Test func hitsRecordAccessAtMostOncePerInterval() throws {
        let root = F.folder("touch")
        defer { F.remove(root) }
        let disk = cache(root)
        let key = F.key("t")
        #expect(disk.store(.image(F.image(100)), for: key))
        let p = disk.entryPath(key.hex)
        let now = Int(Date().timeIntervalSince1970)
        F.setMtime(p, now - 30)
        _ = disk.entry(for: key)
        #expect(F.mtime(p) == now - 30)          // touched less than a minute ago: no write
        F.setMtime(p, now - 61)
        _ = disk.entry(for: key)
        #expect(F.mtime(p) >= now)
    }

    /// 20 entries with ascending access times; the limit holds 10; low water half of it.
    @Test func sweepEvictsLeastRecentlyUsedDownToLowWater() throws {
        let root = F.folder("sweep")
        defer { F.remove(root) }
        let probe = cache(root)
        #expect(probe.store(.image(F.image(1000)), for: F.key("probe")))
        let entrySize = probe.stats().bytes
        probe.removeEntry(for: F.key("probe"))

        let disk = cache(root, limit: entrySize * 10, lowWater: 0.5)
        let base = Int(Date().timeIntervalSince1970) - 10_000
        var keys: [CacheKey] = []
        for i in 0..<20 {
            let key = F.key("k\(i)")
            keys.append(key)
            #expect(disk.store(.image(F.image(1000, seed: UInt8(i))), for: key))
            F.setMtime(disk.entryPath(key.hex), base + i * 10)
        }
        // A hit on an old entry makes it recent.
        #expect(disk.entry(for: keys[0]) != nil)
        let stats = try #require(disk.sweep())
        #expect(stats.bytes <= entrySize * 5)
        #expect(stats.entries == 5 && stats.removedEntries == 15 && !stats.overLimit)
        let left = keys.indices.filter { disk.entry(for: keys[$0]) != nil }
        #expect(left == [0, 16, 17, 18, 19])
        #expect(disk.stats().bytes == stats.bytes)
        // Under the limit: a sweep evicts nothing.
        #expect(disk.sweep()?.removedEntries == 0)
    }

    @Test func sweepIsBoundedAndExclusive() throws {
        let root = F.folder("batch")
        defer { F.remove(root) }
        let disk = cache(root, limit: 1 << 20, lowWater: 0.1)
        for i in 0..<20 { #expect(disk.store(.image(F.image(100_000, seed: UInt8(i))), for: F.key("k\(i)"))) }
        // Another process sweeping: nothing happens here.
        let fd = open(root + "/sweep.lock", O_RDWR | O_CREAT, 0o644)
        #expect(flock(fd, LOCK_EX | LOCK_NB) == 0)
        #expect(disk.sweep() == nil)
        close(fd)
        let first = try #require(disk.sweep(maxBatch: 3))
        #expect(first.removedEntries == 3 && first.overLimit && first.entries == 17)
        let second = try #require(disk.sweep(maxBatch: 100))
        #expect(!second.overLimit && second.bytes <= (1 << 20) / 10 && second.entries == 1)
    }

    /// The sweep runs on a thread of its own; its result comes with a later call (or `finishSweep`).
    @Test func maybeSweepStartsABackgroundSweepAfterATwentiethOfTheLimitWasWritten() {
        let root = F.folder("maybe")
        defer { F.remove(root) }
        let disk = cache(root, limit: 1 << 20, lowWater: 0.5)
        #expect(disk.store(.image(F.image(50_000)), for: F.key("a")))
        #expect(disk.maybeSweep() == nil)               // 50 KB < 52 KB: none started
        #expect(disk.bytesSinceSweep > 0)
        for i in 0..<30 { #expect(disk.store(.image(F.image(50_000, seed: UInt8(i))), for: F.key("b\(i)"))) }
        #expect(disk.maybeSweep() == nil)               // started; nothing finished yet to report
        #expect(disk.bytesSinceSweep == 0)
        let stats = disk.finishSweep(timeout: 30)
        #expect(stats != nil && stats!.removedEntries > 0 && stats!.bytes <= (1 << 20) / 2)
        #expect(disk.finishSweep(timeout: 1) == nil)    // reported once
        #expect(disk.stats().bytes <= (1 << 20) / 2)
    }

    /// Memory bounded by the batch, LRU order kept across batches: the oldest go first.
    @Test func sweepBatchesEvictTheOldestFirst() throws {
        let root = F.folder("oldest")
        defer { F.remove(root) }
        let probe = cache(root)
        #expect(probe.store(.image(F.image(1000)), for: F.key("probe")))
        let entrySize = probe.stats().bytes
        probe.removeEntry(for: F.key("probe"))
        let disk = cache(root, limit: entrySize * 30, lowWater: 0.5)
        let base = Int(Date().timeIntervalSince1970) - 100_000
        // 40 entries, stored in an order unrelated to their age.
        let order = (0..<40).map { ($0 * 17) % 40 }
        var keys: [Int: CacheKey] = [:]
        for age in order {
            let key = F.key("e\(age)")
            keys[age] = key
            #expect(disk.store(.image(F.image(1000, seed: UInt8(age))), for: key))
            F.setMtime(disk.entryPath(key.hex), base + age * 100)
        }
        let first = try #require(disk.sweep(maxBatch: 7))
        #expect(first.removedEntries == 7 && first.overLimit)
        // Looked up by file, not by `entry(for:)`, which would record an access.
        let exists = { (age: Int) in FileManager.default.fileExists(atPath: disk.entryPath(keys[age]!.hex)) }
        #expect((0..<40).filter { !exists($0) } == Array(0..<7))
        let second = try #require(disk.sweep(maxBatch: 100))
        #expect(!second.overLimit && second.entries == 15)
        #expect((0..<40).filter(exists) == Array(25..<40))
    }

    @Test func sweepRemovesExpiredFailuresStaleLocksAndTemporaryFiles() throws {
        let root = F.folder("stale")
        defer { F.remove(root) }
        let clock = ManualClock()
        clock.milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let disk = cache(root, now: { clock.milliseconds })
        #expect(disk.store(.failure(PipelineFailure(.notFound, "gone"), expires: clock.milliseconds + 10_000), for: F.key("f1")))
        #expect(disk.store(.failure(PipelineFailure(.notFound, "gone"), expires: clock.milliseconds + 60_000), for: F.key("f2")))
        #expect(disk.store(.image(F.image(100)), for: F.key("img")))

        let old = Int(Date().timeIntervalSince1970) - 3600
        // Stale lock, unlocked: removed. Stale lock still held: kept. Fresh lock: kept.
        guard case .acquired(let staleLock, _) = disk.lock(F.key("s1"), timeout: 0),
              case .acquired(let heldLock, _) = disk.lock(F.key("s2"), timeout: 0),
              case .acquired(let freshLock, _) = disk.lock(F.key("s3"), timeout: 0) else {
            Issue.record("locks not acquired")
            return
        }
        staleLock.abandon()
        freshLock.abandon()
        F.setMtime(staleLock.path, old)
        F.setMtime(heldLock.path, old)
        try Data([1]).write(to: URL(fileURLWithPath: root + "/tmp/old.1.1"))
        try Data([1]).write(to: URL(fileURLWithPath: root + "/tmp/new.1.2"))
        F.setMtime(root + "/tmp/old.1.1", old)

        clock.advance(seconds: 20)
        let stats = try #require(disk.sweep())
        #expect(stats.removedEntries == 1 && stats.entries == 2)
        #expect(stats.removedLocks == 1 && stats.removedTemps == 1)
        #expect(!FileManager.default.fileExists(atPath: staleLock.path))
        #expect(FileManager.default.fileExists(atPath: heldLock.path))
        #expect(FileManager.default.fileExists(atPath: freshLock.path))
        #expect(F.files(under: root + "/tmp") == ["new.1.2"])
        #expect(disk.entry(for: F.key("f2")) != nil)
        heldLock.release()
    }

    @Test func purgeBySourcePathAndAll() {
        let root = F.folder("purge")
        defer { F.remove(root) }
        let disk = cache(root)
        #expect(disk.store(.image(F.image(100, source: "img/a.jpg")), for: F.key("w:100", source: "img/a.jpg")))
        #expect(disk.store(.image(F.image(200, source: "img/a.jpg")), for: F.key("w:200", source: "img/a.jpg")))
        #expect(disk.store(.failure(PipelineFailure(.corrupt, "bad"), expires: .max), for: F.key("w:300", source: "img/a.jpg")))
        #expect(disk.store(.image(F.image(100, source: "img/a.jpg.bak")), for: F.key("w:100", source: "img/a.jpg.bak")))
        #expect(disk.store(.image(F.image(100, source: "b.jpg")), for: F.key("w:100", source: "b.jpg")))
        let purged = disk.purge(sourcePath: "img/a.jpg")
        #expect(purged.entries == 3)
        #expect(disk.entry(for: F.key("w:100", source: "img/a.jpg")) == nil)
        #expect(disk.entry(for: F.key("w:100", source: "img/a.jpg.bak")) != nil)
        #expect(disk.entry(for: F.key("w:100", source: "b.jpg")) != nil)
        #expect(disk.stats().entries == 2)
        #expect(disk.purgeAll().entries == 2)
        #expect(disk.stats().entries == 0)
    }
}
