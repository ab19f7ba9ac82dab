import Foundation
import Glibc
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// Temporary files of the disk cache (`tmp/<hex16>.<pid>.<n>`): those of a writer that died are
/// removed at start and by the sweep; those being written count against the size limit.
@Suite struct CachingTempFilesTests {
    typealias F = CachingFixtures

    func cache(_ path: String, limit: Int = 1 << 30, lowWater: Double = 0.9, recorder: LogRecorder = LogRecorder()) -> DiskCache {
        DiskCache(path: path, sizeLimit: limit, lowWater: lowWater, logger: F.logger(recorder))
    }

    /// The pid of a process that has exited (and been reaped).
    func deadPID() throws -> pid_t {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/true")
        try p.run()
        p.waitUntilExit()
        let pid = p.processIdentifier
        #expect(kill(pid, 0) != 0 && errno == ESRCH)
        return pid
    }

    func write(_ bytes: Int, to path: String) throws {
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test func abandonedTemporaryFilesAreRemovedAtStartAndLogged() throws {
        let root = F.folder("abandoned")
        defer { F.remove(root) }
        let recorder = LogRecorder()
        let disk = cache(root, recorder: recorder)
        CacheFiles.makeDirectories(disk.tempFolder)
        let dead = try deadPID()
        try write(10_000, to: "\(disk.tempFolder)/0123456789abcdef.\(dead).1")
        // This process and pid 1 are alive: their files are being written. A name without a pid
        // is left to the sweep (by age).
        try write(100, to: "\(disk.tempFolder)/0123456789abcdef.\(getpid()).7")
        try write(100, to: "\(disk.tempFolder)/0123456789abcdef.1.1")
        try write(100, to: "\(disk.tempFolder)/junk")

        let removed = disk.removeAbandonedTemps()
        #expect(removed.files == 1 && removed.bytes >= 10_000)
        #expect(F.files(under: disk.tempFolder) == ["0123456789abcdef.1.1", "0123456789abcdef.\(getpid()).7", "junk"].sorted())
        let notices = recorder.messages(.notice)
        #expect(notices.count == 1 && notices[0].contains("removed 1 temporary files"))
        // Nothing left to remove: nothing logged.
        #expect(disk.removeAbandonedTemps().files == 0)
        #expect(recorder.messages(.notice).count == 1)
    }

    @Test func sweepRemovesADeadWritersFileWhateverItsAge() throws {
        let root = F.folder("deadsweep")
        defer { F.remove(root) }
        let disk = cache(root)
        CacheFiles.makeDirectories(disk.tempFolder)
        let dead = try deadPID()
        try write(100, to: "\(disk.tempFolder)/0123456789abcdef.\(dead).1")
        // The sweeping process's own fresh file is being written (by this process): kept.
        try write(100, to: "\(disk.tempFolder)/0123456789abcdef.\(getpid()).2")
        let stats = try #require(disk.sweep())
        #expect(stats.removedTemps == 1 && stats.tempFiles == 1)
        #expect(F.files(under: disk.tempFolder) == ["0123456789abcdef.\(getpid()).2"])
    }

    /// 8 entries under a limit of 10; a file being written as large as 4 more puts the cache over
    /// the limit, and the sweep evicts down to low water (5) counting it: 1 entry stays.
    @Test func sweepCountsFilesBeingWrittenAgainstTheLimit() throws {
        let root = F.folder("tempsize")
        defer { F.remove(root) }
        let probe = cache(root)
        #expect(probe.store(.image(F.image(1000)), for: F.key("probe")))
        let entrySize = probe.stats().bytes
        probe.removeEntry(for: F.key("probe"))

        let disk = cache(root, limit: entrySize * 10, lowWater: 0.5)
        for i in 0..<8 { #expect(disk.store(.image(F.image(1000, seed: UInt8(i))), for: F.key("k\(i)"))) }
        #expect(disk.sweep()?.removedEntries == 0)

        let temp = "\(disk.tempFolder)/0123456789abcdef.\(getpid()).99"
        try write(entrySize * 4, to: temp)
        let stats = disk.stats()
        #expect(stats.tempFiles == 1 && stats.tempBytes >= entrySize * 4 && stats.bytes == entrySize * 8)

        let swept = try #require(disk.sweep())
        #expect(swept.tempFiles == 1 && swept.tempBytes == stats.tempBytes)
        #expect(swept.removedEntries == 7 && swept.entries == 1)
        #expect(swept.bytes == entrySize && swept.bytes + swept.tempBytes <= entrySize * 5)
        #expect(!swept.overLimit)
        #expect(FileManager.default.fileExists(atPath: temp))

        // Once the file is gone (renamed into place or removed), it no longer counts.
        unlink(temp)
        let after = try #require(disk.sweep())
        #expect(after.tempBytes == 0 && after.bytes == entrySize && after.removedEntries == 0)
    }
}
