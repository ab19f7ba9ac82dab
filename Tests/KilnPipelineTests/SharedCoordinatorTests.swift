import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// The shared result store's place in a fetch (`RenderCoordinator+Shared.swift`): memory → disk →
/// lock → disk → shared → render; renders enqueued, hits and failures not; writes after the answer.
@Suite struct SharedCoordinatorTests {
    typealias F = CachingFixtures

    /// A shared store that answers what it is told and records what it was asked, in order.
    final class FakeShared: SharedCaching, @unchecked Sendable {
        var answer: SharedLookup = .miss
        var events: [String] = []
        var enqueued: [(CacheKey, CachedImage)] = []
        /// Runs inside `lookUp` (to look at the world while the lookup happens).
        var during: (() -> Void)?

        var looked: [CacheKey] = []

        func lookUp(_ key: CacheKey) -> SharedLookup {
            events.append("lookUp")
            looked.append(key)
            during?()
            return answer
        }

        func enqueue(_ image: CachedImage, for key: CacheKey) {
            events.append("enqueue")
            enqueued.append((key, image))
        }

        func flush() -> [SharedWrite] {
            events.append("flush")
            defer { enqueued.removeAll() }
            return enqueued.map { .written($0.1.data.count) }
        }
    }

    final class SharedEars: RenderObserving {
        var lookups: [SharedLookup] = []
        var writes: [SharedWrite] = []
        func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure) {}
        func sharedLookup(_ lookup: SharedLookup) { lookups.append(lookup) }
        func sharedWrite(_ write: SharedWrite) { writes.append(write) }
    }

    static func coordinator(_ root: String?, shared: FakeShared?, storesFinal: Bool = true) -> RenderCoordinator {
        let logger = F.quietLogger
        return RenderCoordinator(memory: MemoryCache(), diskCache: root.map { DiskCache(path: $0, logger: logger) }, lockTimeout: 5,
                                 negativeTTL: 10, storesFinal: storesFinal, shared: shared, logger: logger)
    }

    @Test func theStoreIsAskedAfterBothLocalCachesAndBeforeRendering() throws {
        let root = F.folder("shared-order")
        defer { F.remove(root) }
        let shared = FakeShared()
        let c = Self.coordinator(root, shared: shared)
        let ears = SharedEars()
        let key = F.key("w:10")
        var renders = 0
        let render = { () -> CachedImage in
            shared.events.append("render")
            renders += 1
            return F.image(500)
        }
        #expect(try c.fetch(key, observer: ears, render: render) == (F.image(500), .miss))
        #expect(shared.events == ["lookUp", "render", "enqueue"])
        #expect(ears.lookups == [.miss])
        // Memory, then (another worker) disk: the store is not asked again, nothing more enqueued.
        #expect(try c.fetch(key, observer: ears, render: render).1 == .hitMemory)
        #expect(try Self.coordinator(root, shared: shared).fetch(key, observer: ears, render: render).1 == .hitDisk)
        #expect(shared.events == ["lookUp", "render", "enqueue"] && renders == 1)
        // After the answer: written, and told to the observer.
        #expect(c.flushShared(observer: ears) == [.written(500)])
        #expect(ears.writes == [.written(500)] && shared.events.last == "flush")
    }

    /// Two versions of a file with the same size and mtime (an edit by `exiftool -P`, `rsync -t`)
    /// are two names in the store: the key carries the content digest, asked once per fetch and
    /// only when the store is reached; the local key is unchanged.
    @Test func theSourceDigestNamesTheSharedObject() throws {
        let root = F.folder("shared-digest")
        defer { F.remove(root) }
        let shared = FakeShared()
        let key = F.key("w:12")
        var asked = 0
        for (i, digest) in ["aa", "bb"].enumerated() {
            let c = Self.coordinator(i == 0 ? root : nil, shared: shared)
            _ = try c.fetch(key, sourceDigest: { asked += 1; return digest }, render: { F.image(300) })
        }
        #expect(asked == 2)   // once per fetch, for the lookup and the write alike
        #expect(shared.looked.count == 2 && shared.enqueued.count == 2)
        #expect(shared.looked[0].sharedHex == key.sharing(sourceDigest: "aa").sharedHex)
        #expect(shared.looked[1].sharedHex == key.sharing(sourceDigest: "bb").sharedHex)
        #expect(shared.looked[0].sharedHex != shared.looked[1].sharedHex && shared.looked[0].sharedHex != key.sharedHex)
        #expect(shared.enqueued.map { $0.0.sharedHex } == shared.looked.map(\.sharedHex))
        #expect(shared.looked.allSatisfy { $0.hex == key.hex })
        // A local hit never asks for the digest.
        _ = try Self.coordinator(root, shared: shared).fetch(key, sourceDigest: { asked += 1; return "cc" }, render: { F.image(300) })
        #expect(asked == 2)
    }

    @Test func theLookupHappensUnderTheRenderLock() throws {
        let root = F.folder("shared-lock")
        defer { F.remove(root) }
        let shared = FakeShared()
        let key = F.key("w:11")
        // Another worker (its own DiskCache: its own flocks) tries the variant's render lock
        // while the store is being asked: it is held.
        let other = DiskCache(path: root, logger: F.quietLogger)
        var heldDuringLookup: Bool?
        shared.during = {
            if case .acquired(let lock, _) = other.lock(key, timeout: 0) {
                lock.release()
                heldDuringLookup = false
            } else {
                heldDuringLookup = true
            }
        }
        _ = try Self.coordinator(root, shared: shared).fetch(key) { F.image(10) }
        #expect(heldDuringLookup == true)
    }

    @Test func aHitIsKeptOnDiskAndInMemoryAndNeitherRenderedNorEnqueued() throws {
        let root = F.folder("shared-hit")
        defer { F.remove(root) }
        let shared = FakeShared()
        shared.answer = .hit(F.image(700, seed: 3))
        let c = Self.coordinator(root, shared: shared)
        let ears = SharedEars()
        let key = F.key("w:12")
        var renders = 0
        #expect(try c.fetch(key, observer: ears) { renders += 1; return F.image(1) } == (F.image(700, seed: 3), .hitShared))
        #expect(try c.fetch(key) { renders += 1; return F.image(1) } == (F.image(700, seed: 3), .hitMemory))
        #expect(try Self.coordinator(root, shared: shared).fetch(key) { renders += 1; return F.image(1) }.1 == .hitDisk)
        #expect(renders == 0 && shared.events == ["lookUp"] && shared.enqueued.isEmpty)
        #expect(ears.lookups == [.hit(F.image(700, seed: 3))])
        #expect(c.flushShared(observer: ears).isEmpty)
    }

    @Test func aFailedOrSkippedLookupRendersAndEnqueues() throws {
        for answer in [SharedLookup.failed("timed out"), .skipped] {
            let root = F.folder("shared-failed")
            defer { F.remove(root) }
            let shared = FakeShared()
            shared.answer = answer
            let ears = SharedEars()
            #expect(try Self.coordinator(root, shared: shared).fetch(F.key("w:13"), observer: ears) { F.image(20) }.1 == .miss)
            #expect(shared.events == ["lookUp", "enqueue"] && ears.lookups == [answer])
        }
    }

    @Test func failuresAreNeverEnqueued() throws {
        let root = F.folder("shared-fail")
        defer { F.remove(root) }
        let shared = FakeShared()
        let c = Self.coordinator(root, shared: shared)
        for kind in [PipelineFailure.Kind.corrupt, .internal] {
            #expect(throws: PipelineFailure.self) { try c.fetch(F.key("bad-\(kind)")) { throw PipelineFailure(kind, "broken") } }
        }
        #expect(shared.enqueued.isEmpty && !shared.events.contains("enqueue"))
        // A remembered failure does not ask the store either.
        let asked = shared.events.count
        #expect(throws: PipelineFailure.self) { try c.fetch(F.key("bad-\(PipelineFailure.Kind.corrupt)")) { F.image(1) } }
        #expect(shared.events.count == asked)
    }

    @Test func withoutLocksTheStoreIsAskedBeforeRenderingToo() throws {
        // No disk cache at all: memory → shared → render.
        let shared = FakeShared()
        shared.answer = .hit(F.image(40))
        let plain = Self.coordinator(nil, shared: shared)
        #expect(try plain.fetch(F.key("w:14")) { F.image(1) } == (F.image(40), .hitShared))
        shared.answer = .miss
        #expect(try plain.fetch(F.key("w:15")) { F.image(2) } == (F.image(2), .miss))
        #expect(shared.events == ["lookUp", "lookUp", "enqueue"])
        // `cache.store = original`: no render lock, nothing written to disk.
        let root = F.folder("shared-original")
        defer { F.remove(root) }
        let originals = FakeShared()
        originals.answer = .hit(F.image(41))
        let c = Self.coordinator(root, shared: originals, storesFinal: false)
        #expect(try c.fetch(F.key("w:16")) { F.image(1) } == (F.image(41), .hitShared))
        #expect(c.disk?.entry(for: F.key("w:16")).map { _ in true } == nil)
    }

    @Test func theSharedKeyIgnoresTheInode() {
        let a = CacheKey(canonicalRequest: "w:10/-/a.jpg", outputFormat: "webp",
                         source: SourceIdentity(size: 10, mtimeNanoseconds: 5, inode: 1), sourcePath: "a.jpg")
        let b = CacheKey(canonicalRequest: "w:10/-/a.jpg", outputFormat: "webp",
                         source: SourceIdentity(size: 10, mtimeNanoseconds: 5, inode: 2), sourcePath: "a.jpg")
        let c = CacheKey(canonicalRequest: "w:10/-/a.jpg", outputFormat: "webp",
                         source: SourceIdentity(size: 10, mtimeNanoseconds: 6, inode: 1), sourcePath: "a.jpg")
        let d = CacheKey(canonicalRequest: "w:10/-/a.jpg", outputFormat: "webp",
                         source: SourceIdentity(size: 10, mtimeNanoseconds: 5, inode: 1, validator: "\"e1\""), sourcePath: "a.jpg")
        #expect(a.hex != b.hex && a.sharedHex == b.sharedHex)
        #expect(a.sharedHex != c.sharedHex && a.sharedHex != d.sharedHex && a.sharedHex != a.hex)
        #expect(a.sharedHex.count == 64)
        #expect(SourceIdentity(size: 10, mtimeNanoseconds: 5, inode: 1, validator: "v").portableCanonical == "s=10;m=5;v=v")
    }
}
