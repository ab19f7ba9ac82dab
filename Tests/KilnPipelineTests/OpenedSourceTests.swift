import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// Sources are opened once per request: the key takes the identity of the handle, and a miss
/// reads that same handle.
@Suite struct OpenedSourceTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus").path
    /// The corpus must be there (`shared/` beside the repository): a missing one fails the tests
    /// that read it, it does not skip them.
    static func requireCorpus() throws {
        try #require(FileManager.default.fileExists(atPath: corpus + "/pillow_hopper.jpg"),
                     "the shared corpus is missing: expected \(corpus)/pillow_hopper.jpg (shared/ must sit beside the repository)")
    }

    /// The corpus photo in a `MemorySource`, which counts opens, `stat`s and loads.
    static func photo() throws -> MemorySource {
        try requireCorpus()
        let files = MemorySource()
        files.put("pillow_hopper.jpg", Array(try Data(contentsOf: URL(fileURLWithPath: corpus + "/pillow_hopper.jpg"))))
        return files
    }

    @Test func theHandleReadsTheVersionItsIdentityNames() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-open-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: root + "/a.bin"))
        let source = try FileSource(root: root, maxFileBytes: 100)
        let opened = try source.open("a.bin")
        #expect(opened.identity == (try source.identity(of: "a.bin")) && opened.path == "a.bin")
        // Replaced after the open (a new inode, renamed into place): the handle keeps the old one.
        try Data([7, 7, 7, 7, 7]).write(to: URL(fileURLWithPath: root + "/new.bin"))
        _ = rename(root + "/new.bin", root + "/a.bin")
        #expect(try opened.readAll() == [1, 2, 3])
        #expect(opened.identity != (try source.identity(of: "a.bin")))
        #expect(try source.open("a.bin").readAll() == [7, 7, 7, 7, 7])
        #expect(throws: LoadError.tooLarge("source is 5 bytes, over the limit of 4")) {
            try FileSource(root: root, maxFileBytes: 4).open("a.bin").readAll()
        }
    }

    @Test func aMissOpensOnceAndAHitOpensOnce() throws {
        let counting = try Self.photo()
        let folder = CachingFixtures.folder("open-once")
        defer { CachingFixtures.remove(folder) }
        let cache = RenderCoordinator(memory: MemoryCache(), diskCache: DiskCache(path: folder, logger: CachingFixtures.quietLogger),
                                      logger: CachingFixtures.quietLogger)
        let pipeline = ImagePipeline(stages: try .standard(source: counting), cache: cache)
        let request = try SpecParser().parse("/w:40/pillow_hopper.jpg", isDecoded: true)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .miss)
        #expect(counting.opens == 1 && counting.identityLookups == 0 && counting.loads == 0 && counting.reads.count == 1)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .hitMemory)
        #expect(counting.opens == 2 && counting.identityLookups == 0 && counting.loads == 0 && counting.reads.count == 1)
    }

    @Test func keptOriginalsNeedNoFurtherStat() throws {
        let counting = try Self.photo()
        let folder = CachingFixtures.folder("open-originals")
        defer { CachingFixtures.remove(folder) }
        let disk = DiskCache(path: folder, logger: CachingFixtures.quietLogger)
        let cache = RenderCoordinator(memory: MemoryCache(), diskCache: disk, logger: CachingFixtures.quietLogger)
        let pipeline = ImagePipeline(stages: try .standard(source: counting), cache: cache).keepingOriginals(in: disk, store: .both)
        for spec in ["/w:40/pillow_hopper.jpg", "/w:50/pillow_hopper.jpg"] {
            #expect(try pipeline.image(for: try SpecParser().parse(spec, isDecoded: true), accepted: accepting(nil)).outcome == .miss)
        }
        // The second variant read the kept original, not the source.
        #expect(counting.opens == 2 && counting.identityLookups == 0 && counting.loads == 0 && counting.reads.count == 1)
    }
}
