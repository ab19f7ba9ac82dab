import Foundation
import Testing
import KilnTestSupport
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// A `DataCaching` in memory that records what was asked of it.
final class RecordingDisk: DataCaching, @unchecked Sendable {
    var entries: [String: CacheEntry] = [:]
    var log: [String] = []

    func entry(for key: CacheKey) -> CacheEntry? {
        log.append("disk.entry")
        return entries[key.hex]
    }

    func store(_ entry: CacheEntry, for key: CacheKey) -> Bool {
        log.append(entry.isFailure ? "disk.store.failure" : "disk.store")
        entries[key.hex] = entry
        return true
    }

    func removeEntry(for key: CacheKey) { entries[key.hex] = nil }
    func maybeSweep() -> SweepStats? { nil }
    func finishSweep(timeout: Double) -> SweepStats? { nil }
}

extension CacheEntry {
    var isFailure: Bool { if case .failure = self { true } else { false } }
}

/// A stand-in render lock: records lock and release; `whileWaiting` runs as if another process
/// held the lock and did its work before this one got it (`waited: true`).
final class StandInLock: RenderLocking, @unchecked Sendable {
    let disk: RecordingDisk
    var whileWaiting: ((CacheKey) -> Void)?

    init(disk: RecordingDisk) { self.disk = disk }

    func lock(_ key: CacheKey, timeout: Double) -> LockResult {
        disk.log.append("lock")
        let waited = whileWaiting != nil
        whileWaiting?(key)
        whileWaiting = nil
        return .acquired(RenderLock { [disk] in disk.log.append("release") }, waited: waited)
    }
}

/// The cache path of `ImagePipeline.image(for:accept:)` with stand-in caches and lock.
@Suite struct PipelineCachePathTests {
    typealias F = CachingFixtures

    /// A 6×4 PNG made by the real encoder, as a source in memory.
    static func source() throws -> MemorySource {
        let pixels = PixelBuffer(width: 6, height: 4, channels: 3, pixels: (0..<72).map { UInt8($0 * 3) })
        let png = try Codecs.encoder(for: .png).encode(pixels, options: EncodeOptions(format: .png))
        let files = MemorySource()
        files.put("a.png", png)
        files.put("bad.png", Array(png.prefix(40)))
        return files
    }

    static func pipeline(_ files: MemorySource, disk: RecordingDisk, lock: StandInLock) throws -> ImagePipeline {
        let cache = RenderCoordinator(memory: MemoryCache(), disk: disk, locks: lock, logger: F.quietLogger)
        return ImagePipeline(stages: try .standard(source: files), cache: cache)
    }

    @Test func missThenMemoryHit() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        let lock = StandInLock(disk: disk)
        let pipeline = try Self.pipeline(files, disk: disk, lock: lock)
        let request = try SpecParser().parse("/w:3/f:png/a.png", isDecoded: true)
        let first = try pipeline.image(for: request, accepted: accepting(nil))
        #expect(first.outcome == .miss && first.contentType == "image/png")
        // memory miss → disk miss → lock → disk again → render → store → release
        #expect(disk.log == ["disk.entry", "lock", "disk.entry", "disk.store", "release"])
        #expect(first.timeline.phases.map(\.name).contains("encode"))
        disk.log = []
        let second = try pipeline.image(for: request, accepted: accepting(nil))
        #expect(second.outcome == .hitMemory && second.data == first.data && second.etag == first.etag)
        #expect(disk.log.isEmpty)
    }

    @Test func aWaiterReadsWhatTheHolderStored() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        let lock = StandInLock(disk: disk)
        let holder = try Self.pipeline(files, disk: RecordingDisk(), lock: StandInLock(disk: RecordingDisk()))
        let request = try SpecParser().parse("/w:3/f:png/a.png", isDecoded: true)
        let rendered = try holder.image(for: request, accepted: accepting(nil))
        lock.whileWaiting = { key in disk.entries[key.hex] = .image(rendered.image) }
        let waiter = try Self.pipeline(files, disk: disk, lock: lock)
        let result = try waiter.image(for: request, accepted: accepting(nil))
        #expect(result.outcome == .coalesced && result.data == rendered.data)
        #expect(disk.log == ["disk.entry", "lock", "disk.entry", "release"])
        #expect(result.timeline.phases.map(\.name) == ["key", "wait"])
    }

    @Test func aFailureIsRememberedAsADomainFailure() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        let lock = StandInLock(disk: disk)
        let pipeline = try Self.pipeline(files, disk: disk, lock: lock)
        let request = try SpecParser().parse("/w:3/bad.png", isDecoded: true)
        var first: PipelineFailure?
        do { _ = try pipeline.image(for: request, accepted: accepting(nil)) } catch { first = error }
        #expect(first?.kind == .corrupt && first?.outcome == .miss)
        #expect(disk.log == ["disk.entry", "lock", "disk.entry", "disk.store.failure", "release"])
        guard case let .failure(stored, _)? = disk.entries.values.first else {
            Issue.record("no negative entry")
            return
        }
        #expect(stored == PipelineFailure(.corrupt, first?.message ?? ""))
        // The same pipeline remembers it; another one reads it from disk.
        #expect(throws: PipelineFailure(.corrupt, stored.message, outcome: .hitMemory)) {
            try pipeline.image(for: request, accepted: accepting(nil))
        }
        let other = try Self.pipeline(files, disk: disk, lock: lock)
        #expect(throws: PipelineFailure(.corrupt, stored.message, outcome: .hitDisk)) {
            try other.image(for: request, accepted: accepting(nil))
        }
    }

    @Test func internalFailuresAreNotRemembered() throws {
        struct FailingEncoders: ImageEncoderProviding {
            struct Failing: ImageEncoding {
                func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
                    throw .failed("libfoo: out of cheese at 0x1234")
                }
            }
            func encoder(for format: ImageFormat) -> any ImageEncoding { Failing() }
        }
        let files = try Self.source()
        let disk = RecordingDisk()
        var stages = try PipelineStages.standard(source: files)
        stages.encoders = FailingEncoders()
        let pipeline = ImagePipeline(stages: stages, cache: RenderCoordinator(memory: MemoryCache(), disk: disk,
                                                                              locks: StandInLock(disk: disk), logger: F.quietLogger))
        let request = try SpecParser().parse("/a.png", isDecoded: true)
        var failure: PipelineFailure?
        do { _ = try pipeline.image(for: request, accepted: accepting(nil)) } catch { failure = error }
        #expect(failure?.kind == .internal)
        #expect(failure?.message == PipelineFailure.encodeFailed)          // public: a fixed sentence
        #expect(failure?.detail?.contains("out of cheese") == true)        // the log gets the detail
        #expect(disk.entries.isEmpty)
    }

    @Test func withoutCachesEveryRequestRenders() throws {
        let files = try Self.source()
        let pipeline = ImagePipeline(stages: try .standard(source: files))
        let request = try SpecParser().parse("/a.png", isDecoded: true)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .miss)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .miss)
        #expect(try pipeline.sourceVersion(for: request) == files.files["a.png"]?.identity)
        #expect(throws: PipelineFailure(.notFound, "no source at b.png")) {
            try pipeline.sourceVersion(for: try SpecParser().parse("/b.png", isDecoded: true))
        }
    }
}
