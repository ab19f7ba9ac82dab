import Foundation
import Glibc
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// The purge journal (`<disk_path>/purged`): a purge on disk reaches every worker's memory at
/// its next request.
@Suite struct PurgeJournalTests {
    typealias F = CachingFixtures

    static func coordinator(_ root: String) -> RenderCoordinator {
        RenderCoordinator(memory: MemoryCache(), diskCache: DiskCache(path: root, logger: F.quietLogger), logger: F.quietLogger)
    }

    static func cached(_ c: RenderCoordinator, _ key: CacheKey, _ image: CachedImage) throws -> CacheOutcome {
        c.requestBegan()
        return try c.fetch(key) { image }.1
    }

    @Test func aPurgeReachesEveryWorkersMemoryAtItsNextRequest() throws {
        let root = F.folder("journal")
        defer { F.remove(root) }
        let a = F.key("w:100", source: "a.jpg"), b = F.key("w:100", source: "b.jpg")
        let workers = [Self.coordinator(root), Self.coordinator(root)]
        for w in workers {
            _ = try Self.cached(w, a, F.image(100, source: "a.jpg"))
            _ = try Self.cached(w, b, F.image(100, source: "b.jpg"))
            #expect(try Self.cached(w, a, F.image(100, source: "a.jpg")) == .hitMemory)
        }
        // `kiln cache purge --source a.jpg` or the master, with its own DiskCache.
        let removed = DiskCache(path: root, logger: F.quietLogger).purge(sourcePath: "a.jpg")
        #expect(removed.entries == 1)
        let journal = try String(contentsOfFile: root + "/purged", encoding: .utf8)
        #expect(journal == SourceTag(sourcePath: "a.jpg").hex + "\n")
        // The first renders again (neither memory nor disk), the second reads that new render from disk.
        #expect(try Self.cached(workers[0], a, F.image(100, source: "a.jpg")) == .miss)
        #expect(try Self.cached(workers[1], a, F.image(100, source: "a.jpg")) == .hitDisk)
        for w in workers {
            #expect(try Self.cached(w, b, F.image(100, source: "b.jpg")) == .hitMemory)  // b kept
            #expect(try Self.cached(w, a, F.image(100, source: "a.jpg")) == .hitMemory)
        }
    }

    @Test func readsOnlyNewLinesAndWholeOnes() throws {
        let root = F.folder("journal-lines")
        defer { F.remove(root) }
        let reader = PurgeJournal(diskPath: root)
        #expect(reader.changes() == .none)
        #expect(FileManager.default.fileExists(atPath: root + "/purged"))
        let x = SourceTag(sourcePath: "x.png"), y = SourceTag(sourcePath: "dir/y.png")
        #expect(PurgeJournal.record(x, diskPath: root))
        #expect(reader.changes() == .sources([x.hex]))
        #expect(reader.changes() == .none)
        // Half a line waits for the rest; junk lines name nothing.
        let fd = open(root + "/purged", O_WRONLY | O_APPEND)
        #expect(fd >= 0)
        let half = Array("not-hex\n\(y.hex.prefix(10))".utf8)
        #expect(write(fd, half, half.count) == half.count)
        #expect(reader.changes() == .none)
        let rest = Array("\(y.hex.dropFirst(10))\n".utf8)
        #expect(write(fd, rest, rest.count) == rest.count)
        close(fd)
        #expect(reader.changes() == .sources([y.hex]))
        // A reader made now starts at the end.
        #expect(PurgeJournal(diskPath: root).changes() == .none)
    }

    @Test func aReplacedOrCutJournalDropsEverything() throws {
        let root = F.folder("journal-reset")
        defer { F.remove(root) }
        let w = Self.coordinator(root)
        let a = F.key("w:1", source: "a.jpg"), b = F.key("w:1", source: "b.jpg")
        _ = try Self.cached(w, a, F.image(10, source: "a.jpg"))
        _ = try Self.cached(w, b, F.image(10, source: "b.jpg"))
        // Everything purged: the journal is replaced (new inode).
        #expect(DiskCache(path: root, logger: F.quietLogger).purgeAll().entries == 2)
        #expect(try Self.cached(w, b, F.image(10, source: "b.jpg")) == .miss)
        #expect(try Self.cached(w, a, F.image(10, source: "a.jpg")) == .miss)
        #expect((w.memory as! MemoryCache).totalCount == 2)
        // Cut in place (same inode, shorter): everything too.
        let reader = PurgeJournal(diskPath: root)
        PurgeJournal.record(SourceTag(sourcePath: "c"), diskPath: root)
        PurgeJournal.record(SourceTag(sourcePath: "d"), diskPath: root)
        #expect(reader.changes() == .sources([SourceTag(sourcePath: "c").hex, SourceTag(sourcePath: "d").hex]))
        #expect(truncate(root + "/purged", 33) == 0)
        #expect(reader.changes() == .everything)
        #expect(reader.changes() == .none)
        // Removed: everything once.
        #expect(unlink(root + "/purged") == 0)
        #expect(reader.changes() == .everything)
        #expect(reader.changes() == .none)
        // A symbolic link is no journal: never followed.
        let elsewhere = root + "/elsewhere"
        #expect(FileManager.default.createFile(atPath: elsewhere, contents: Data((SourceTag(sourcePath: "e").hex + "\n").utf8)))
        #expect(symlink(elsewhere, root + "/purged") == 0)
        #expect(reader.changes() == .none)
        #expect(!PurgeJournal.record(SourceTag(sourcePath: "f"), diskPath: root))
    }

    @Test func aLongJournalIsReplacedBeforeAppending() throws {
        let root = F.folder("journal-rotate")
        defer { F.remove(root) }
        let reader = PurgeJournal(diskPath: root)
        let lines = PurgeJournal.rotateBytes / 33 + 1
        for i in 0..<lines { PurgeJournal.record(SourceTag(sourcePath: "s\(i)"), diskPath: root) }
        guard case .sources(let tags) = reader.changes() else { Issue.record("no sources"); return }
        #expect(tags.count == lines)
        var st = stat()
        #expect(stat(root + "/purged", &st) == 0 && Int(st.st_size) > PurgeJournal.rotateBytes)
        PurgeJournal.record(SourceTag(sourcePath: "last"), diskPath: root)
        #expect(stat(root + "/purged", &st) == 0 && st.st_size == 33)
        #expect(reader.changes() == .everything)
        PurgeJournal.record(SourceTag(sourcePath: "after"), diskPath: root)
        #expect(reader.changes() == .sources([SourceTag(sourcePath: "after").hex]))
    }

    @Test func memoryCacheRemovesWhatMatches() {
        let m = MemoryCache()
        m[F.key("1", source: "a")] = F.image(10, source: "a")
        m[F.key("2", source: "a")] = F.image(10, source: "a")
        m[F.key("1", source: "b")] = F.image(20, source: "b")
        #expect(m.removeAll { $0.sourcePath == "a" } == 2)
        #expect(m.totalCount == 1 && m.totalCost == 20)
        #expect(m[F.key("1", source: "b")] != nil && m[F.key("1", source: "a")] == nil)
    }
}
