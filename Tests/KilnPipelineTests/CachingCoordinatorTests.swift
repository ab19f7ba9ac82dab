import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

@Suite struct CachingCoordinatorTests {
    typealias F = CachingFixtures

    // The coalescing tests wait for a requester to enter the `wait` stage (it is about to wait for
    // the render lock: `RecordingObserver.waitUntilEntered(.wait)`) instead of sleeping and
    // assuming the other thread got there.

    /// One coordinator with its own memory and its own `DiskCache` (own file descriptors, so its
    /// `flock`s conflict with every other instance's, as another process's would).
    static func coordinator(_ root: String?, lockTimeout: Double = 5, storesFinal: Bool = true,
                            recorder: LogRecorder = LogRecorder(), clock: ManualClock? = nil) -> RenderCoordinator {
        let logger = F.logger(recorder)
        let now: () -> Int64 = clock.map { c in { c.milliseconds } } ?? DiskCache.wallClockMilliseconds
        let disk = root.map { DiskCache(path: $0, logger: logger, now: now) }
        return RenderCoordinator(memory: MemoryCache(), diskCache: disk, lockTimeout: lockTimeout, negativeTTL: 10,
                                 storesFinal: storesFinal, logger: logger, now: now)
    }

    @Test func memoryThenDiskThenRender() throws {
        let root = F.folder("flow")
        defer { F.remove(root) }
        let key = F.key("w:100")
        var renders = 0
        let first = Self.coordinator(root)
        let render = { () -> CachedImage in renders += 1; return F.image(30_000) }
        #expect(try first.fetch(key, render: render).1 == .miss)
        #expect(try first.fetch(key, render: render) == (F.image(30_000), .hitMemory))
        let second = Self.coordinator(root)                       // another worker
        #expect(try second.fetch(key, render: render) == (F.image(30_000), .hitDisk))
        #expect(try second.fetch(key, render: render).1 == .hitMemory)
        #expect(renders == 1)
        #expect(F.files(under: root + "/locks").isEmpty)          // the holder removed its lock file
    }

    @Test func withoutDiskOnlyMemory() throws {
        let c = Self.coordinator(nil)
        var renders = 0
        #expect(try c.fetch(F.key("a")) { renders += 1; return F.image(10) }.1 == .miss)
        #expect(try c.fetch(F.key("a")) { renders += 1; return F.image(10) }.1 == .hitMemory)
        #expect(throws: PipelineFailure(.notFound, "broken 404", outcome: .miss)) {
            try c.fetch(F.key("b")) { renders += 1; throw PipelineFailure(.notFound, "broken 404") }
        }
        #expect(throws: PipelineFailure(.notFound, "broken 404", outcome: .hitMemory)) {
            try c.fetch(F.key("b")) { renders += 1; throw PipelineFailure(.notFound, "broken 404") }
        }
        #expect(renders == 2)
    }

    @Test func clientErrorsAreRememberedBriefly() throws {
        let root = F.folder("negative")
        defer { F.remove(root) }
        let clock = ManualClock()
        let c = Self.coordinator(root, clock: clock)
        let key = F.key("bad")
        var renders = 0
        let failing = { () throws -> CachedImage in renders += 1; throw PipelineFailure(.corrupt, "broken 422") }
        #expect(throws: PipelineFailure(.corrupt, "broken 422", outcome: .miss)) { try c.fetch(key, render: failing) }
        #expect(throws: PipelineFailure(.corrupt, "broken 422", outcome: .hitMemory)) { try c.fetch(key, render: failing) }
        let other = Self.coordinator(root, clock: clock)
        #expect(throws: PipelineFailure(.corrupt, "broken 422", outcome: .hitDisk)) { try other.fetch(key, render: failing) }
        #expect(renders == 1)
        clock.advance(seconds: 10)
        #expect(try c.fetch(key) { renders += 1; return F.image(5) }.1 == .miss)
        #expect(renders == 2)
    }

    @Test func serverErrorsAndUnmappedErrorsAreNotRemembered() throws {
        let root = F.folder("5xx")
        defer { F.remove(root) }
        let c = Self.coordinator(root)
        let key = F.key("flaky")
        var renders = 0
        #expect(throws: PipelineFailure(.internal, "broken 500")) { try c.fetch(key) { renders += 1; throw PipelineFailure(.internal, "broken 500") } }
        #expect(throws: PipelineFailure(.internal, PipelineFailure.internalError, detail: "\(CocoaError(.fileNoSuchFile))")) { try c.fetch(key) { renders += 1; throw CocoaError(.fileNoSuchFile) } }
        #expect(DiskCache(path: root, logger: F.quietLogger).entry(for: key) == nil)
        #expect(try c.fetch(key) { renders += 1; return F.image(5) }.1 == .miss)
        #expect(renders == 3)
    }

    @Test func storeOriginalKeepsRenderedResultsOffDisk() throws {
        let root = F.folder("original")
        defer { F.remove(root) }
        var renders = 0
        #expect(try Self.coordinator(root, storesFinal: false).fetch(F.key("a")) { renders += 1; return F.image(10) }.1 == .miss)
        #expect(try Self.coordinator(root, storesFinal: false).fetch(F.key("a")) { renders += 1; return F.image(10) }.1 == .miss)
        #expect(renders == 2 && DiskCache(path: root, logger: F.quietLogger).stats().entries == 0)
    }

    // MARK: Coalescing, one process, several open file descriptions

    @Test func aSecondRequesterWaitsAndGetsTheSameBytes() throws {
        let root = F.folder("coalesce")
        defer { F.remove(root) }
        let key = F.key("slow")
        let started = DispatchSemaphore(value: 0)
        let second = RecordingObserver()
        let holderOutcome = Shared<CacheOutcome?>(nil)
        let join = F.thread {
            let r = try? Self.coordinator(root).fetch(key) {
                started.signal()
                _ = second.waitUntilEntered(.wait)    // the second requester waits for this lock
                Thread.sleep(forTimeInterval: 0.2)
                return F.image(30_000, seed: 9)
            }
            holderOutcome.with { $0 = r?.1 }
        }
        started.wait()
        var rendered = false
        let t0 = Date()
        let (image, outcome) = try Self.coordinator(root).fetch(key, observer: second) { rendered = true; return F.image(1) }
        join()
        #expect(outcome == .coalesced && !rendered && image == F.image(30_000, seed: 9))
        #expect(Date().timeIntervalSince(t0) > 0.1)
        #expect(holderOutcome.get == .miss)
    }

    @Test func aHoldersClientErrorReachesTheWaiterWithoutARender() throws {
        let root = F.folder("coalesce-fail")
        defer { F.remove(root) }
        let key = F.key("corrupt")
        let started = DispatchSemaphore(value: 0)
        let waiter = RecordingObserver()
        let holderError = Shared<PipelineFailure?>(nil)
        let join = F.thread {
            do {
                _ = try Self.coordinator(root).fetch(key) {
                    started.signal()
                    _ = waiter.waitUntilEntered(.wait)    // the other requester waits for this lock
                    Thread.sleep(forTimeInterval: 0.05)
                    throw PipelineFailure(.corrupt, "broken 422")
                }
            } catch {
                holderError.with { $0 = error as? PipelineFailure }
            }
        }
        started.wait()
        var rendered = false
        #expect(throws: PipelineFailure(.corrupt, "broken 422", outcome: .coalesced)) {
            try Self.coordinator(root).fetch(key, observer: waiter) { rendered = true; return F.image(1) }
        }
        join()
        #expect(!rendered)
        #expect(holderError.get == PipelineFailure(.corrupt, "broken 422", outcome: .miss))
    }

    @Test func whenTheHolderDiesTheWaiterRendersItself() throws {
        let root = F.folder("coalesce-dead")
        defer { F.remove(root) }
        let key = F.key("orphan")
        let holder = DiskCache(path: root, logger: F.quietLogger)
        guard case .acquired(let lock, false) = holder.lock(key, timeout: 0) else {
            Issue.record("no lock")
            return
        }
        let result = Shared<(CacheOutcome, Bool, Double)?>(nil)
        let waiter = RecordingObserver()
        let join = F.thread {
            var rendered = false
            let t0 = Date()
            let r = try? Self.coordinator(root).fetch(key, observer: waiter) { rendered = true; return F.image(100, seed: 4) }
            result.with { $0 = r.map { ($0.1, rendered, Date().timeIntervalSince(t0)) } }
        }
        #expect(waiter.waitUntilEntered(.wait), "the requester never came to the lock")
        Thread.sleep(forTimeInterval: 0.15)       // it has waited at least this long
        lock.abandon()                            // fd closed, nothing written, lock file left behind
        join()
        let (outcome, rendered, waited) = try #require(result.get)
        #expect(outcome == .miss && rendered && waited >= 0.1)
        #expect(holder.entry(for: key) == .image(F.image(100, seed: 4)))
    }

    @Test func manyWaitersOneRender() throws {
        let root = F.folder("coalesce-many")
        defer { F.remove(root) }
        let key = F.key("popular")
        let renders = Shared(0)
        let outcomes = Shared<[CacheOutcome]>([])
        let go = DispatchSemaphore(value: 0)
        let joins = (0..<6).map { _ in
            F.thread {
                let c = Self.coordinator(root)
                go.wait()
                if let r = try? c.fetch(key, render: {
                    renders.with { $0 += 1 }
                    Thread.sleep(forTimeInterval: 0.1)
                    return F.image(20_000, seed: 7)
                }) {
                    #expect(r.0 == F.image(20_000, seed: 7))
                    outcomes.with { $0.append(r.1) }
                }
            }
        }
        for _ in joins { go.signal() }
        for join in joins { join() }
        #expect(renders.get == 1)
        #expect(outcomes.get.count == 6)
        #expect(outcomes.get.filter { $0 == .miss }.count == 1)
        #expect(outcomes.get.allSatisfy { $0 == .miss || $0 == .coalesced || $0 == .hitDisk })
    }

    /// A server error is not remembered: one waiter renders, and the others (and a request that
    /// arrives meanwhile) wait for it instead of rendering beside it. That needs the inode check
    /// after locking: the failed holder removed the lock file the waiters had opened.
    @Test func afterAServerErrorOneWaiterRendersForAll() throws {
        let root = F.folder("coalesce-5xx")
        defer { F.remove(root) }
        let key = F.key("flaky")
        let started = DispatchSemaphore(value: 0)
        let renders = Shared(0)
        let outcomes = Shared<[CacheOutcome]>([])
        let holder = F.thread {
            _ = try? Self.coordinator(root).fetch(key) {
                started.signal()
                Thread.sleep(forTimeInterval: 0.1)
                throw PipelineFailure(.internal, "broken 503")
            }
        }
        started.wait()
        let waiter = { @Sendable in
            if let r = try? Self.coordinator(root).fetch(key, render: {
                renders.with { $0 += 1 }
                Thread.sleep(forTimeInterval: 0.2)
                return F.image(500, seed: 5)
            }) { outcomes.with { $0.append(r.1) } }
        }
        let waiters = (0..<3).map { _ in F.thread(waiter) }
        // The holder failed; one waiter is rendering.
        let deadline = Date().addingTimeInterval(10)
        while renders.get == 0 && Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        #expect(renders.get == 1, "no waiter took over after the holder failed")
        let late = F.thread(waiter)
        holder()
        for join in waiters + [late] { join() }
        #expect(renders.get == 1)
        #expect(outcomes.get.count == 4 && outcomes.get.filter { $0 == .miss }.count == 1)
    }

    @Test func aHolderThatNeverFinishesTimesOut() throws {
        let root = F.folder("timeout")
        defer { F.remove(root) }
        let key = F.key("stuck")
        let holder = DiskCache(path: root, logger: F.quietLogger)
        guard case .acquired(let lock, _) = holder.lock(key, timeout: 0) else {
            Issue.record("no lock")
            return
        }
        defer { lock.release() }
        let recorder = LogRecorder()
        let t0 = Date()
        #expect(try Self.coordinator(root, lockTimeout: 0.15, recorder: recorder).fetch(key) { F.image(10) }.1 == .miss)
        let waited = Date().timeIntervalSince(t0)
        #expect(waited >= 0.15 && waited < 1)
        #expect(recorder.messages(.warning).count == 1)
        // lock_timeout 0: no waiting at all.
        let other = F.key("stuck-too")
        guard case .acquired(let otherLock, _) = holder.lock(other, timeout: 0) else {
            Issue.record("no lock")
            return
        }
        defer { otherLock.release() }
        let t1 = Date()
        #expect(try Self.coordinator(root, lockTimeout: 0).fetch(other) { F.image(10) }.1 == .miss)
        guard case .timedOut = DiskCache(path: root, logger: F.quietLogger).lock(other, timeout: 0) else {
            Issue.record("lock should be busy")
            return
        }
        #expect(Date().timeIntervalSince(t1) < 0.1)
    }

    // MARK: Coalescing across real processes (util-linux flock(1) holds the lock)

    /// Waits until another process holds the `flock` on `path`.
    static func waitUntilLocked(_ path: String) -> Bool {
        for _ in 0..<1000 {
            let fd = open(path, O_RDWR | O_CREAT, 0o644)
            defer { close(fd) }
            if fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return false
    }

    static func shell(_ script: String) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", script]
        try p.run()
        return p
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func anotherProcessRendersAndThisOneReadsItsEntry() throws {
        let root = F.folder("proc")
        defer { F.remove(root) }
        let disk = DiskCache(path: root, logger: F.quietLogger)
        let key = F.key("proc")
        let image = F.image(30_000, seed: 3)
        // What the other process will publish, written beforehand; it only renames it into place.
        let staged = root + "/tmp/staged"
        try FileManager.default.createDirectory(atPath: root + "/tmp", withIntermediateDirectories: true)
        try Data(EntryCodec.encodeHeader(.image(image), key: key, body: image.data) + image.data).write(to: URL(fileURLWithPath: staged))
        let final = disk.entryPath(key.hex), lockPath = disk.lockPath(key.hex)
        for p in [final, lockPath] {
            try FileManager.default.createDirectory(atPath: (p as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        }
        // It publishes once this process waits for its lock (the `go` file), then releases the lock.
        let go = root + "/go"
        let other = try Self.shell("exec /usr/bin/flock -x '\(lockPath)' /bin/sh -c \"while [ ! -e '\(go)' ]; do sleep 0.01; done; mv '\(staged)' '\(final)'\"")
        defer { other.waitUntilExit() }
        try #require(Self.waitUntilLocked(lockPath))
        let waiting = RecordingObserver { stage, detail in
            if stage == .wait && detail.isEmpty { _ = FileManager.default.createFile(atPath: go, contents: nil) }
        }
        var rendered = false
        let (got, outcome) = try Self.coordinator(root).fetch(key, observer: waiting) { rendered = true; return F.image(1) }
        #expect(outcome == .coalesced && got == image && !rendered)
    }

    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func aHolderKilledWithSIGKILLFreesTheLock() throws {
        let root = F.folder("kill")
        defer { F.remove(root) }
        let disk = DiskCache(path: root, logger: F.quietLogger)
        let key = F.key("killed")
        let lockPath = disk.lockPath(key.hex)
        try FileManager.default.createDirectory(atPath: (lockPath as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        // One process holds the lock: the shell opens it as fd 9, flock(1) locks that open file,
        // and the shell becomes `sleep`, keeping fd 9.
        let holder = try Self.shell("exec 9>'\(lockPath)'; /usr/bin/flock -x 9; exec sleep 30")
        try #require(Self.waitUntilLocked(lockPath))
        let result = Shared<(CacheOutcome, Bool, Double)?>(nil)
        let waiter = RecordingObserver()
        let join = F.thread {
            var rendered = false
            let t0 = Date()
            let r = try? Self.coordinator(root).fetch(key, observer: waiter) { rendered = true; return F.image(100) }
            result.with { $0 = r.map { ($0.1, rendered, Date().timeIntervalSince(t0)) } }
        }
        #expect(waiter.waitUntilEntered(.wait), "the requester never came to the lock")
        Thread.sleep(forTimeInterval: 0.2)        // it has waited at least this long
        kill(holder.processIdentifier, SIGKILL)
        holder.waitUntilExit()
        join()
        let (outcome, rendered, waited) = try #require(result.get)
        #expect(outcome == .miss && rendered)
        // Taken over once the kernel freed the lock: well within the 5 s lock timeout it would
        // otherwise have waited out.
        #expect(waited >= 0.15 && waited < 2.5)
        #expect(disk.entry(for: key) == .image(F.image(100)))
    }
}
