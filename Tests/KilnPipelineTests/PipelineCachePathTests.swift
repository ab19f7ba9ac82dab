import Foundation
import Testing
import KilnTestSupport
import KilnCodecs
import KilnModel
@testable import KilnPipeline

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
        #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "disk.store", "release"])
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
        #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "release"])
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
        #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "disk.store.failure", "release"])
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

    /// The holder left nothing (it died or failed): the waiter says it takes over and renders.
    @Test func aWaiterTakesOverWhenTheHolderLeftNothing() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        let lock = StandInLock(disk: disk)
        lock.whileWaiting = { _ in }
        let pipeline = try Self.pipeline(files, disk: disk, lock: lock)
        let observer = RecordingObserver()
        pipeline.observer = observer
        let result = try pipeline.image(for: try SpecParser().parse("/w:3/f:png/a.png", isDecoded: true), accepted: accepting(nil))
        #expect(result.outcome == .miss)
        #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "disk.entry", "disk.store", "release"])
        #expect(observer.locksTaken == [true])
        #expect(Array(observer.entries.prefix(3)) == [.init(.cache), .init(.wait), .init(.wait, "took over")])
        #expect(files.reads == ["a.png"])
    }

    /// Another process held the lock for the whole timeout: this one reads what it stored meanwhile,
    /// or else renders too (and warns); no lock was held, so none is released.
    @Test func aTimedOutWaiterReadsTheHoldersEntryOrRendersToo() throws {
        let files = try Self.source()
        let request = try SpecParser().parse("/w:3/f:png/a.png", isDecoded: true)
        let rendered = try Self.pipeline(files, disk: RecordingDisk(), lock: StandInLock(disk: RecordingDisk()))
            .image(for: request, accepted: accepting(nil))
        for holderStored in [true, false] {
            let disk = RecordingDisk()
            let lock = StandInLock(disk: disk, answer: .timeOut)
            if holderStored { lock.whileWaiting = { key in disk.entries[key.hex] = .image(rendered.image) } }
            let recorder = LogRecorder()
            let pipeline = ImagePipeline(stages: try .standard(source: files),
                                         cache: RenderCoordinator(memory: MemoryCache(), disk: disk, locks: lock, lockTimeout: 3,
                                                                  logger: F.logger(recorder)))
            let observer = RecordingObserver()
            pipeline.observer = observer
            let result = try pipeline.image(for: request, accepted: accepting(nil))
            #expect(result.outcome == (holderStored ? CacheOutcome.coalesced : .miss) && result.data == rendered.data)
            #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry"] + (holderStored ? [] : ["disk.entry", "disk.store"]))
            #expect(lock.timeouts == [3] && observer.locksTaken == [true])
            #expect(observer.stages.contains(.load) == !holderStored)
            #expect(recorder.messages(.warning).count == (holderStored ? 0 : 1))
        }
    }

    /// Locks cannot be taken (the folder is read-only): render and store without one.
    @Test func withoutLocksTheRenderGoesOnUnlocked() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        let pipeline = try Self.pipeline(files, disk: disk, lock: StandInLock(disk: disk, answer: .unavailable))
        let observer = RecordingObserver()
        pipeline.observer = observer
        let result = try pipeline.image(for: try SpecParser().parse("/w:3/f:png/a.png", isDecoded: true), accepted: accepting(nil))
        #expect(result.outcome == .miss)
        #expect(disk.log == ["disk.entry", "disk.entry", "lock", "disk.store"])
        #expect(observer.locksTaken == [false])
    }

    @Test func internalFailuresAreNotRemembered() throws {
        let files = try Self.source()
        let disk = RecordingDisk()
        var stages = try PipelineStages.standard(source: files)
        let encoder = RecordingEncoder(error: .failed("libfoo: out of cheese at 0x1234"))
        stages.encoders = encoder
        let pipeline = ImagePipeline(stages: stages, cache: RenderCoordinator(memory: MemoryCache(), disk: disk,
                                                                              locks: StandInLock(disk: disk), logger: F.quietLogger))
        let request = try SpecParser().parse("/a.png", isDecoded: true)
        var failure: PipelineFailure?
        do { _ = try pipeline.image(for: request, accepted: accepting(nil)) } catch { failure = error }
        #expect(failure?.kind == .internal)
        #expect(failure?.message == PipelineFailure.encodeFailed)          // public: a fixed sentence
        #expect(failure?.detail?.contains("out of cheese") == true)        // the log gets the detail
        #expect(disk.entries.isEmpty)
        #expect(encoder.calls.map(\.options.format) == [.png] && encoder.calls.first?.image.size == PixelSize(width: 6, height: 4))
    }

    @Test func withoutCachesEveryRequestRenders() throws {
        let files = try Self.source()
        let pipeline = ImagePipeline(stages: try .standard(source: files))
        let request = try SpecParser().parse("/a.png", isDecoded: true)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .miss)
        #expect(try pipeline.image(for: request, accepted: accepting(nil)).outcome == .miss)
    }
}
