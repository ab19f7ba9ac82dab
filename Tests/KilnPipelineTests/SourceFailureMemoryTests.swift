import Foundation
import Testing
import KilnTestSupport
import KilnCodecs
import KilnModel
@testable import KilnPipeline

/// Failures of a source itself remembered per source, not per variant (issue 25, item 3): with
/// real disk caches, one per "worker", sharing a folder.
@Suite struct SourceFailureMemoryTests {
    typealias F = CachingFixtures

    static func png(width: Int = 6, height: Int = 4) throws -> [UInt8] {
        let pixels = PixelBuffer(width: width, height: height, channels: 3, pixels: (0..<(width * height * 3)).map { UInt8($0 % 251) })
        return try Codecs.encoder(for: .png).encode(pixels, options: EncodeOptions(format: .png))
    }

    /// A worker: its own memory cache and its own `DiskCache` over `root`.
    static func worker(_ files: MemorySource, root: String, limits: LimitsConfiguration = LimitsConfiguration(),
                       clock: ManualClock? = nil, renderTimeout: Double = 0,
                       recorder: LogRecorder = LogRecorder()) throws -> ImagePipeline {
        let logger = F.logger(recorder)
        let now: () -> Int64 = clock.map { c in { c.milliseconds } } ?? DiskCache.wallClockMilliseconds
        let cache = RenderCoordinator(memory: MemoryCache(), diskCache: DiskCache(path: root, logger: logger, now: now),
                                      renderTimeout: renderTimeout, negativeTTL: 10, logger: logger, now: now)
        return ImagePipeline(stages: try .standard(source: files), limits: limits, cache: cache)
    }

    static func failure(_ pipeline: ImagePipeline, _ spec: String) -> PipelineFailure? {
        do {
            _ = try pipeline.image(for: try SpecParser().parse(spec, isDecoded: true), accepted: accepting(nil))
            return nil
        } catch {
            return error as? PipelineFailure
        }
    }

    @Test func oneCorruptSourceAtAHundredSizesIsReadOnce() throws {
        let root = F.folder("source-corrupt")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("bad.png", Array(try Self.png(width: 64, height: 64).prefix(60)))
        let workers = [try Self.worker(files, root: root), try Self.worker(files, root: root)]
        var outcomes: [CacheOutcome?] = []
        var messages: Set<String> = []
        for w in 1...100 {
            let f = Self.failure(workers[w % 2], "/w:\(w)/f:png/bad.png")
            #expect(f?.kind == .corrupt)
            outcomes.append(f?.outcome)
            messages.insert(f?.message ?? "")
        }
        #expect(files.reads == ["bad.png"])                 // one attempt for 100 sizes on two workers
        #expect(outcomes.filter { $0 == .miss }.count == 1)
        #expect(messages.count == 1)                        // the same one-line reason every time
    }

    @Test func aChangedSourceIsNotBlockedAndTheMemoryExpires() throws {
        let root = F.folder("source-changed")
        defer { F.remove(root) }
        let clock = ManualClock()
        let files = MemorySource()
        files.put("a.png", Array(try Self.png().prefix(40)))
        let worker = try Self.worker(files, root: root, clock: clock)
        #expect(Self.failure(worker, "/w:3/a.png")?.outcome == .miss)
        #expect(Self.failure(worker, "/w:4/a.png")?.outcome == .hitMemory)
        #expect(Self.failure(try Self.worker(files, root: root, clock: clock), "/w:5/a.png")?.outcome == .hitDisk)
        #expect(files.reads.count == 1)
        // Fixed in place: a new version (new mtime) is rendered at once.
        files.put("a.png", try Self.png(), mtime: 1_700_000_100_000_000_000)
        #expect(Self.failure(worker, "/w:6/f:png/a.png") == nil)
        // Broken again: remembered; after cache.negative_ttl it is tried again.
        files.put("a.png", Array(try Self.png().prefix(40)), mtime: 1_700_000_200_000_000_000)
        #expect(Self.failure(worker, "/w:3/a.png")?.outcome == .miss)
        #expect(Self.failure(worker, "/w:7/a.png")?.outcome == .hitMemory)
        clock.advance(seconds: 10)
        #expect(Self.failure(worker, "/w:8/a.png")?.outcome == .miss)
        #expect(files.reads.count == 4)
    }

    /// Over budget at its smallest possible decode: every variant is, so it is remembered for the
    /// source. A budget only the variant's own steps exceed (an enlarged output) stays per variant.
    @Test func aBudgetRefusalIsPerSourceOnlyWhenTheDecodeAloneIsOver() throws {
        let root = F.folder("source-budget")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("a.png", try Self.png(width: 64, height: 64))
        var tiny = LimitsConfiguration()
        tiny.maxRequestMemory = 1_000
        let strict = try Self.worker(files, root: root, limits: tiny)
        let first = Self.failure(strict, "/w:10/f:png/a.png")
        #expect(first?.kind == .tooLarge && first?.outcome == .miss)
        #expect(Self.failure(strict, "/w:11/f:png/a.png") == first.map { PipelineFailure($0.kind, $0.message, outcome: .hitMemory) })

        let otherRoot = F.folder("source-budget-variant")
        defer { F.remove(otherRoot) }
        var small = LimitsConfiguration()
        small.maxRequestMemory = 2 << 20           // the 64×64 decode fits; a 4000×4000 result does not
        let worker = try Self.worker(files, root: otherRoot, limits: small)
        #expect(Self.failure(worker, "/w:4000/el:1/f:png/a.png")?.kind == .tooLarge)
        #expect(Self.failure(worker, "/w:10/f:png/a.png") == nil)
        #expect(files.reads.count == 3)
    }

    /// A failure of the variant (here a processor's refusal) is not taken for the source's.
    @Test func aVariantFailureStaysPerVariant() throws {
        let root = F.folder("source-variant")
        defer { F.remove(root) }
        let files = MemorySource()
        files.put("a.png", try Self.png())
        let worker = try Self.worker(files, root: root)
        #expect(Self.failure(worker, "/crop:2:2:50:80/a.png")?.kind == .invalidRequest)
        #expect(Self.failure(worker, "/w:3/f:png/a.png") == nil)
        #expect(files.reads.count == 2)
    }

    /// The decode marker: a decoder killed at its deadline leaves the marker behind, unlocked; the
    /// next request for any variant is refused without decoding, with the deadline's reason, and
    /// so are the others for cache.negative_ttl. One that died before its deadline (a crash) is
    /// decoded again; a live decode is not waited for.
    @Test func aDecodeKilledAtTheDeadlineIsRemembered() throws {
        let root = F.folder("source-deadline")
        defer { F.remove(root) }
        let clock = ManualClock()
        let logger = F.quietLogger
        let now: () -> Int64 = { clock.milliseconds }
        func coordinator() -> RenderCoordinator {
            RenderCoordinator(memory: MemoryCache(), diskCache: DiskCache(path: root, logger: logger, now: now),
                              renderTimeout: 2, negativeTTL: 10, logger: logger, now: now)
        }
        let source = CacheKey.sourceFailures(sourcePath: "a.jpg", identity: SourceIdentity(size: 9, mtimeNanoseconds: 1, inode: 2))
        let markers = DiskCache(path: root, logger: logger, now: now)
        var decodes = 0
        let c = coordinator()
        c.requestBegan()
        // A killed decoder's marker, its deadline not reached yet (it crashed): decoded again.
        let crashed = try #require(markers.tryLock(named: source.hex))
        crashed.announce(until: clock.milliseconds + 2_000)
        crashed.abandon()
        _ = try c.decoding(source) { decodes += 1 }
        #expect(decodes == 1)
        // A live decode holds it: not waited for, decoded side by side.
        let live = try #require(markers.tryLock(named: source.hex))
        live.announce(until: clock.milliseconds + 2_000)
        _ = try c.decoding(source) { decodes += 1 }
        #expect(decodes == 2)
        // That decode is killed at its deadline; the next request comes after it.
        live.abandon()
        clock.advance(seconds: 2)
        let render = { () throws -> CachedImage in try c.decoding(source) { decodes += 1; return F.image(5) } }
        let deadline = RenderCoordinator.deadlineFailure(2)
        #expect(throws: deadline.with(outcome: .miss)) { try c.fetch(F.key("w:10"), source: source, render: render) }
        #expect(throws: deadline.with(outcome: .hitMemory)) { try c.fetch(F.key("w:11"), source: source, render: render) }
        let other = coordinator()
        #expect(throws: deadline.with(outcome: .hitDisk)) {
            try other.fetch(F.key("w:12"), source: source) { decodes += 1; return F.image(5) }
        }
        #expect(decodes == 2 && deadline.kind == .tooLarge)
        #expect(F.files(under: root + "/locks").isEmpty)   // the marker was taken and removed
        clock.advance(seconds: 10)
        #expect(try other.fetch(F.key("w:13"), source: source, render: { try other.decoding(source) { decodes += 1; return F.image(5) } }).1 == .miss)
        #expect(decodes == 3)
    }
}

/// The cache folder replaced by a symbolic link while running (issue 25, item 6).
@Suite struct CacheFolderGuardTests {
    typealias F = CachingFixtures

    @Test func aFolderReplacedByALinkIsNotWrittenThrough() throws {
        let base = F.folder("guard")
        defer { F.remove(base) }
        let cache = base + "/cache", images = base + "/images"
        try FileManager.default.createDirectory(atPath: images, withIntermediateDirectories: true)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: images + "/cat.jpg"))
        let recorder = LogRecorder()
        let disk = DiskCache(path: cache, logger: F.logger(recorder))
        #expect(disk.store(.image(F.image(100)), for: F.key("w:1")))
        // rm -rf cache; ln -s images cache
        try FileManager.default.removeItem(atPath: cache)
        try FileManager.default.createSymbolicLink(atPath: cache, withDestinationPath: images)
        #expect(!disk.store(.image(F.image(100)), for: F.key("w:2")))
        #expect(disk.entry(for: F.key("w:1")) == nil)
        if case .unavailable = disk.lock(F.key("w:3"), timeout: 1) {} else { Issue.record("a lock was taken through the link") }
        #expect(disk.sweep() == nil)
        #expect(disk.tryLock(named: F.key("w:4").hex) == nil)
        #expect(!SourceSideFiles(path: cache).writeLines(["x"], to: SourceSideFiles(path: cache).versionPath(SourceSideFiles.id("a"))))
        #expect(F.files(under: images) == ["cat.jpg"])       // nothing written into the image root
        #expect(recorder.messages(.error).count == 1)
        #expect(recorder.messages(.error).first?.contains("symbolic link") == true)
        // A new process (a respawned worker) refuses it from the start.
        let fresh = DiskCache(path: cache, logger: F.quietLogger)
        #expect(!fresh.store(.image(F.image(100)), for: F.key("w:5")))
        #expect(F.files(under: images) == ["cat.jpg"])
        // Put back as a real folder: used again.
        try FileManager.default.removeItem(atPath: cache)
        #expect(disk.store(.image(F.image(100)), for: F.key("w:6")))
    }
}

/// The decode marker of a stepwise decode (animation frames): a kill while the caller's own step
/// runs leaves a marker without a deadline, and the source is decoded again.
@Suite struct DecodeMarkingTests {
    typealias F = CachingFixtures

    @Test func aKillOutsideTheDecodeIsNotTheSources() throws {
        let root = F.folder("marking")
        defer { F.remove(root) }
        let clock = ManualClock()
        let now: () -> Int64 = { clock.milliseconds }
        let c = RenderCoordinator(memory: MemoryCache(), diskCache: DiskCache(path: root, logger: F.quietLogger, now: now),
                                  renderTimeout: 2, negativeTTL: 10, logger: F.quietLogger, now: now)
        let source = CacheKey.sourceFailures(sourcePath: "a.gif", identity: SourceIdentity(size: 9, mtimeNanoseconds: 1, inode: 2))
        let markers = DiskCache(path: root, logger: F.quietLogger, now: now)
        c.requestBegan()
        // Inside the caller's step the marker says nothing; back in the decoder, the deadline again.
        var inside: Int64?, after: Int64?
        try c.decoding(source) { (marking: DecodeMarking) in
            marking.outsideDecode { inside = Self.announced(root, source) }
            after = Self.announced(root, source)
        }
        #expect(inside == nil && after == clock.milliseconds + 2_000)
        // A worker killed in its step (the marker left empty), found after the deadline: decoded.
        let killed = try #require(markers.tryLock(named: source.hex))
        killed.announce(until: clock.milliseconds + 2_000)
        killed.withdrawAnnouncement()
        killed.abandon()
        clock.advance(seconds: 3)
        var decodes = 0
        try c.decoding(source) { decodes += 1 }
        #expect(decodes == 1)
    }

    /// The deadline written in `source`'s marker file, nil when none (or no file).
    static func announced(_ root: String, _ source: CacheKey) -> Int64? {
        let p = "\(root)/locks/\(source.hex.prefix(2))/\(source.hex).lock"
        guard let text = try? String(contentsOfFile: p, encoding: .utf8), let v = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return v
    }
}
