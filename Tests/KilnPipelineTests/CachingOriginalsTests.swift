import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// `cache.store = original | both`: source bytes in the disk cache (`CachingSource`).
@Suite struct CachingOriginalsTests {
    typealias F = CachingFixtures

    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("shared/corpus").path
    /// The corpus must be there (`shared/` beside the repository): a missing one fails the tests
    /// that read it, it does not skip them.
    static func requireCorpus() throws {
        try #require(FileManager.default.fileExists(atPath: corpus + "/pillow_hopper.jpg"),
                     "the shared corpus is missing: expected \(corpus)/pillow_hopper.jpg (shared/ must sit beside the repository)")
    }

    @Test func aSecondLoadOfTheSameVersionReadsTheCacheNotTheSource() throws {
        let root = F.folder("orig")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("a/b.jpg", [1, 2, 3, 4, 5])
        // Two "processes": separate disk cache instances over one folder.
        let first = CachingSource(wrapping: files, disk: DiskCache(path: root, logger: F.quietLogger))
        let second = CachingSource(wrapping: files, disk: DiskCache(path: root, logger: F.quietLogger))
        let a = try first.load("a/b.jpg")
        let b = try second.load("a/b.jpg")
        #expect(files.reads == ["a/b.jpg"])
        #expect(a.data == b.data && a.identity == b.identity && b.path == "a/b.jpg")
        #expect(DiskCache(path: root, logger: F.quietLogger).stats().entries == 1)
    }

    @Test func aChangedSourceIsReadAgain() throws {
        let root = F.folder("orig-changed")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("x.png", [9, 9, 9])
        let source = CachingSource(wrapping: files, disk: DiskCache(path: root, logger: F.quietLogger))
        _ = try source.load("x.png")
        files.put("x.png", [8, 8, 8], mtime: 1_800_000_000_000_000_000)   // same size, new mtime
        #expect(try source.load("x.png").data == [8, 8, 8])
        #expect(try source.load("x.png").data == [8, 8, 8])
        #expect(files.reads.count == 2)
        #expect(throws: LoadError.notFound("no source at gone.jpg")) { try source.load("gone.jpg") }
    }

    @Test func purgeBySourceRemovesOriginalsToo() throws {
        let root = F.folder("orig-purge")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("p.jpg", [1, 2])
        files.put("q.jpg", [3, 4])
        let disk = DiskCache(path: root, logger: F.quietLogger)
        let source = CachingSource(wrapping: files, disk: disk)
        _ = try source.load("p.jpg")
        _ = try source.load("q.jpg")
        #expect(disk.purge(sourcePath: "p.jpg").entries == 1)
        #expect(disk.stats().entries == 1)
    }

    @Test func originalKeysNeverMeetResultKeys() {
        let id = SourceIdentity(size: 1, mtimeNanoseconds: 2, inode: 3)
        let original = CacheKey.original(sourcePath: "a.jpg", identity: id)
        let result = CacheKey(canonicalRequest: "original/a.jpg", outputFormat: "source", source: id, sourcePath: "a.jpg")
        #expect(original.hex != result.hex)
        #expect(original == CacheKey.original(sourcePath: "a.jpg", identity: id))
        #expect(original != CacheKey.original(sourcePath: "a.jpg", identity: SourceIdentity(size: 1, mtimeNanoseconds: 3, inode: 3)))
    }

    /// Two workers render two variants of one source: with `original` the source is read once,
    /// with `final` once per worker.
    @Test(arguments: [CacheConfiguration.Store.final, .original, .both])
    func variantsOfOneSourceAcrossWorkers(store: CacheConfiguration.Store) throws {
        try Self.requireCorpus()
        let root = F.folder("orig-pipe")
        defer { F.remove(root) }
        let counting = MemorySource()
        counting.put("pillow_hopper.jpg", Array(try Data(contentsOf: URL(fileURLWithPath: Self.corpus + "/pillow_hopper.jpg"))))
        func worker() throws -> ImagePipeline {
            let disk = DiskCache(path: root, logger: F.quietLogger)
            let coordinator = RenderCoordinator(memory: MemoryCache(), diskCache: disk, storesFinal: store != .original,
                                                logger: F.quietLogger)
            return ImagePipeline(stages: try .standard(source: counting), cache: coordinator).keepingOriginals(in: disk, store: store)
        }
        let parser = SpecParser()
        var bodies: [[UInt8]] = []
        for (spec, pipeline) in [("/w:32/pillow_hopper.jpg", try worker()), ("/w:48/pillow_hopper.jpg", try worker())] {
            let request = try parser.parse(spec, isDecoded: true)
            let result = try pipeline.image(for: request, accepted: accepting(nil))
            bodies.append(result.data)
            #expect(result.outcome == .miss && result.contentType == "image/jpeg")
        }
        #expect(bodies.count == 2 && bodies[0] != bodies[1])
        #expect(counting.reads.count == (store == .final ? 2 : 1))
        let entries = DiskCache(path: root, logger: F.quietLogger).stats().entries
        #expect(entries == [CacheConfiguration.Store.final: 2, .original: 1, .both: 3][store])
    }

    @Test func finalKeepsThePipelineAsItIs() throws {
        let pipeline = ImagePipeline(stages: try .standard(source: MemorySource()))
        let disk = DiskCache(path: F.folder("orig-none"), logger: F.quietLogger)
        defer { F.remove(disk.path) }
        #expect(pipeline.keepingOriginals(in: disk, store: .final) === pipeline)
        #expect(pipeline.keepingOriginals(in: nil, store: .both) === pipeline)
        #expect(pipeline.keepingOriginals(in: disk, store: .original).stages.source is CachingSource)
    }
}

extension CachingOriginalsTests {
    @Test func aCacheThatCannotStoreStillLoads() throws {
        let root = F.folder("orig-blocked")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("b.jpg", [4, 5, 6])
        let key = CacheKey.original(sourcePath: "b.jpg", identity: try files.identity(of: "b.jpg"))
        // A file where the entry's fan-out folder should be: every store of this key fails.
        try Data([0]).write(to: URL(fileURLWithPath: "\(root)/\(key.hex.prefix(2))"))
        let recorder = LogRecorder()
        let source = CachingSource(wrapping: files, disk: DiskCache(path: root, logger: F.logger(recorder)))
        #expect(try source.load("b.jpg").data == [4, 5, 6])
        #expect(try source.load("b.jpg").data == [4, 5, 6])
        #expect(files.reads.count == 2)                         // not cached, read each time
        #expect(F.files(under: root + "/tmp").isEmpty)
        #expect(recorder.messages(.warning).count == 1)
    }
}
