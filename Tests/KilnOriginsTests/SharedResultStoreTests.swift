import Foundation
import Testing
import KilnTestSupport
import KilnModel
import KilnPipeline
@testable import KilnOrigins

/// The shared result store against an in-memory `ObjectStoring` (the real one, SeaweedFS, is
/// `Tests/integration/test_shared_store.py`): keys, metadata, verification, the breaker, purge.
@Suite struct SharedResultStoreTests {
    typealias F = CachingFixtures

    /// A bucket in memory; `failure` makes every call throw it. Counts the calls.
    final class MemoryBucket: ObjectStoring, @unchecked Sendable {
        private let lock = NSLock()
        private var objects: [String: StoredObject] = [:]
        private var failureValue: ObjectStoreError?
        private(set) var calls = 0

        var failure: ObjectStoreError? {
            get { lock.withLock { failureValue } }
            set { lock.withLock { failureValue = newValue } }
        }
        var keys: [String] { lock.withLock { objects.keys.sorted() } }
        subscript(key: String) -> StoredObject? {
            get { lock.withLock { objects[key] } }
            set { lock.withLock { objects[key] = newValue } }
        }

        private func call() throws(ObjectStoreError) {
            let f: ObjectStoreError? = lock.withLock { calls += 1; return failureValue }
            if let f { throw f }
        }

        func get(_ key: String) throws(ObjectStoreError) -> StoredObject? {
            try call()
            return self[key]
        }

        func put(_ key: String, body: [UInt8], contentType: String, metadata: [String: String]) throws(ObjectStoreError) {
            try call()
            self[key] = StoredObject(body: body, contentType: contentType, metadata: metadata)
        }

        func list(prefix: String) throws(ObjectStoreError) -> [String] {
            try call()
            return keys.filter { $0.hasPrefix(prefix) }
        }

        func delete(_ keys: [String]) throws(ObjectStoreError) -> Int {
            try call()
            return lock.withLock { keys.reduce(0) { n, k in n + (objects.removeValue(forKey: k) == nil ? 0 : 1) } }
        }
    }

    static func store(_ bucket: MemoryBucket, prefix: String = "kiln/results/", maxBytes: Int = 1 << 20,
                      recorder: LogRecorder = LogRecorder(), clock: ManualClock = ManualClock()) -> SharedResultStore {
        SharedResultStore(reader: bucket, prefix: prefix, maxBytes: maxBytes, retryAfter: 10, logger: F.logger(recorder),
                          now: { Double(clock.nanoseconds) / 1e9 })
    }

    static func image(_ count: Int, seed: UInt8 = 1, source: String = "a.jpg") -> CachedImage {
        var image = F.image(count, seed: seed, source: source)
        image.digest = String(repeating: "ab", count: 16)
        return image
    }

    @Test func aWrittenResultIsReadBackWithItsMetadata() throws {
        let bucket = MemoryBucket()
        let store = Self.store(bucket)
        let key = F.key("w:10", source: "photos/cat.jpg")
        let image = Self.image(3000, source: "photos/cat.jpg")
        #expect(store.lookUp(key) == .miss)
        store.enqueue(image, for: key)
        #expect(bucket.keys.isEmpty)                                    // nothing before the flush
        #expect(store.flush() == [.written(3000)])
        #expect(store.flush().isEmpty)
        let name = "kiln/results/" + SourceTag(sourcePath: "photos/cat.jpg").hex + "/" + key.sharedHex
        #expect(bucket.keys == [name])
        let object = try #require(bucket[name])
        #expect(object.contentType == "image/webp" && object.body == image.data)
        #expect(object.metadata == [
            "kiln-key": key.sharedHex, "kiln-version": "\(CacheKey.formatVersion)", "kiln-digest": image.digest,
            "kiln-sha256": Digest.sha256Hex(image.data), "kiln-length": "3000", "kiln-format": "webp",
            "kiln-source-modified": "1700000000",
        ])
        #expect(store.lookUp(key) == .hit(image))
        // A document keeps its kind.
        var document = Self.image(12)
        document.format = nil
        document.document = .blurhash
        let docKey = F.key("f:blurhash")
        store.enqueue(document, for: docKey)
        #expect(store.flush() == [.written(12)])
        #expect(store.lookUp(docKey) == .hit(document))
    }

    @Test func tamperedObjectsAreDiscardedNeverServed() throws {
        let bucket = MemoryBucket()
        let recorder = LogRecorder()
        let store = Self.store(bucket, recorder: recorder)
        let key = F.key("w:20")
        let image = Self.image(2000)
        store.enqueue(image, for: key)
        _ = store.flush()
        let name = store.objectKey(for: key)
        let good = try #require(bucket[name])
        var tampered: [(String, StoredObject)] = []
        func variant(_ what: String, _ change: (inout StoredObject) -> Void) {
            var o = good
            change(&o)
            tampered.append((what, o))
        }
        variant("truncated") { $0.body.removeLast(100) }
        variant("a byte changed") { $0.body[7] ^= 1 }
        variant("wrong sha256") { $0.metadata["kiln-sha256"] = Digest.sha256Hex([1, 2, 3]) }
        variant("wrong length") { $0.body.removeLast(); $0.metadata["kiln-sha256"] = Digest.sha256Hex($0.body) }
        variant("another key") { $0.metadata["kiln-key"] = F.key("w:21").sharedHex }
        variant("another version") { $0.metadata["kiln-version"] = "\(CacheKey.formatVersion + 1)" }
        variant("no format") { $0.metadata["kiln-format"] = nil }
        variant("bad digest") { $0.metadata["kiln-digest"] = "\"><script>" }
        variant("no metadata") { $0.metadata = [:] }
        for (what, object) in tampered {
            bucket[name] = object
            guard case .failed(let reason) = store.lookUp(key) else {
                Issue.record("\(what): served")
                continue
            }
            #expect(reason.contains(name), "\(what): \(reason)")
        }
        // One warning for all of them (one per interval), and the store is still asked: the object
        // was bad, not the store.
        #expect(recorder.messages(.warning).count == 1)
        #expect(recorder.messages(.warning).first?.contains("discarded") == true)
        // The render overwrites it.
        store.enqueue(image, for: key)
        #expect(store.flush() == [.written(2000)])
        #expect(store.lookUp(key) == .hit(image))
    }

    @Test func aFailingStoreIsSkippedForRetryAfterThenAskedAgain() throws {
        let bucket = MemoryBucket()
        let recorder = LogRecorder()
        let clock = ManualClock()
        let store = Self.store(bucket, recorder: recorder, clock: clock)
        let key = F.key("w:30")
        bucket.failure = .unavailable("connection refused")
        #expect(store.lookUp(key) == .failed("connection refused"))
        let calls = bucket.calls
        // Open: neither lookups nor writes reach the store.
        #expect(store.lookUp(key) == .skipped)
        store.enqueue(Self.image(10), for: key)
        #expect(store.flush() == [.skipped])
        clock.advance(seconds: 9.5)
        #expect(store.lookUp(key) == .skipped)
        #expect(bucket.calls == calls)
        #expect(recorder.messages(.warning).count == 1)
        #expect(recorder.messages(.warning)[0].contains("connection refused") && recorder.messages(.warning)[0].contains("10 s"))
        // Past retry_after: asked again; it fails again, one more warning (a new interval).
        clock.advance(seconds: 1)
        #expect(store.lookUp(key) == .failed("connection refused"))
        #expect(bucket.calls == calls + 1)
        #expect(recorder.messages(.warning).count == 2)
        // Past the interval the store is probed by a lookup (short time-out), never by a write.
        clock.advance(seconds: 11)
        store.enqueue(Self.image(10), for: key)
        #expect(store.flush() == [.skipped])
        #expect(bucket.calls == calls + 1)
        bucket.failure = nil
        #expect(store.lookUp(key) == .miss)
        store.enqueue(Self.image(10), for: key)
        #expect(store.flush() == [.written(10)])
        // A failed write opens it too.
        bucket.failure = .unavailable("timed out")
        store.enqueue(Self.image(11), for: F.key("w:31"))
        #expect(store.flush() == [.failed("timed out")])
        #expect(store.lookUp(key) == .skipped)
        clock.advance(seconds: 10)
        bucket.failure = nil
        #expect(store.lookUp(key) == .hit(Self.image(10)))
    }

    @Test func largeResultsAreNotWritten() {
        let bucket = MemoryBucket()
        let store = Self.store(bucket, maxBytes: 4096)
        store.enqueue(Self.image(4097), for: F.key("w:40"))
        store.enqueue(Self.image(4096), for: F.key("w:41"))
        #expect(store.flush() == [.skipped, .written(4096)])
        #expect(bucket.keys.count == 1)
    }

    @Test func objectKeysStayUnderThePrefixWhateverTheSourcePath() {
        let store = Self.store(MemoryBucket(), prefix: "p/")
        let hostile = ["../../x", "a/%2F/../../b", "x\ny", "/etc/passwd", "", "..", "a b?c#d", "%2e%2e/%2e%2e/x", "é/ü\u{0}"]
        var names = Set<String>()
        for path in hostile {
            let name = store.objectKey(for: F.key("w:1", source: path))
            let parts = name.split(separator: "/", omittingEmptySubsequences: false)
            #expect(parts.count == 3 && parts[0] == "p", "\(path): \(name)")
            #expect(parts.dropFirst().allSatisfy { $0.allSatisfy(\.isHexDigit) }, "\(path): \(name)")
            #expect(parts[1].count == 32 && parts[2].count == 64)
            #expect(store.sourcePrefix(path) == "p/" + parts[1] + "/")
            names.insert(name)
        }
        #expect(names.count == hostile.count)
        // Without a prefix, at the bucket's top.
        #expect(Self.store(MemoryBucket(), prefix: "").objectKey(for: F.key("w:1")).hasPrefix(SourceTag(sourcePath: "a.jpg").hex + "/"))
    }

    @Test func purgeDeletesOnlyTheSourcesPrefix() throws {
        let bucket = MemoryBucket()
        let store = Self.store(bucket)
        for (n, source) in ["a.jpg", "a.jpg", "b.jpg", "a.jpg.png"].enumerated() {
            store.enqueue(Self.image(10 + n, source: source), for: F.key("w:\(n)", source: source))
        }
        _ = store.flush()
        bucket["kiln/results/unrelated"] = StoredObject(body: [1], contentType: "x", metadata: [:])
        bucket["elsewhere/" + SourceTag(sourcePath: "a.jpg").hex + "/x"] = StoredObject(body: [1], contentType: "x", metadata: [:])
        #expect(bucket.keys.count == 6)
        #expect(try store.purge(sourcePath: "a.jpg") == 2)
        #expect(bucket.keys.count == 4)
        #expect(!bucket.keys.contains { $0.hasPrefix(store.sourcePrefix("a.jpg")) })
        #expect(try store.purge(sourcePath: "a.jpg") == 0)
        bucket.failure = .refused("AccessDenied")
        #expect(throws: ObjectStoreError.refused("AccessDenied")) { try store.purge(sourcePath: "b.jpg") }
    }

    @Test func settingsAndConstruction() throws {
        let defaults = SharedStoreConfiguration()
        #expect(!defaults.isEnabled && defaults.timeout == 0.3 && defaults.writeTimeout == 2
            && defaults.maxBytes == 16 << 20 && defaults.retryAfter == 10)
        #expect(try SharedResultStore.make(defaults, origins: OriginConfiguration(), logger: F.quietLogger) { _ in nil } == nil)
        let c = try SharedStoreConfiguration(ConfigValues([
            "cache.shared": "s3://kiln-cache/fleet/results", "cache.shared_endpoint": "HTTP://127.0.0.1:8333/",
            "cache.shared_timeout": "250ms",
        ], origin: "test"))
        #expect(c.url == "s3://kiln-cache/fleet/results/" && c.bucket == "kiln-cache" && c.prefix == "fleet/results/")
        #expect(c.endpointURL(origins: OriginConfiguration()) == "http://127.0.0.1:8333" && c.timeout == 0.25)
        let top = try SharedStoreConfiguration(ConfigValues(["cache.shared": "s3://kiln-cache"], origin: "test"))
        #expect(top.bucket == "kiln-cache" && top.prefix == "")
        #expect(top.endpointURL(origins: OriginConfiguration()) == "https://s3.us-east-1.amazonaws.com")
        for (key, value) in [("cache.shared", "http://x/"), ("cache.shared", "s3://A/"), ("cache.shared", "s3://kiln/../x"),
                             ("cache.shared_endpoint", "ftp://x"), ("cache.shared_timeout", "0"), ("cache.shared_max_bytes", "1")] {
            do {
                _ = try SharedStoreConfiguration(ConfigValues([key: value], origin: "test"))
                Issue.record("\(key) = \(value) accepted")
            } catch {
                #expect("\(error)".contains(key), "\(error)")
            }
        }
        // No credentials: a configuration error that names cache.shared.
        do {
            _ = try SharedResultStore.make(c, origins: OriginConfiguration(), logger: F.quietLogger) { _ in nil }
            Issue.record("made without credentials")
        } catch {
            #expect("\(error)".contains("cache.shared") && "\(error)".contains("AWS_ACCESS_KEY_ID"), "\(error)")
        }
        let environment = ["AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret"]
        let store = try #require(try SharedResultStore.make(c, origins: OriginConfiguration(), logger: F.quietLogger) { environment[$0] })
        #expect(store.prefix == "fleet/results/" && store.maxBytes == 16 << 20)
    }
}
