import Foundation
import Testing
import KilnTestSupport
import KilnModel
@testable import KilnPipeline

/// Coalescing stays coalescing for slow renders: a waiter keeps waiting past `lockTimeout` while
/// the holder's announced deadline has not passed, and gives up once it has (or when none was
/// announced). Two `DiskCache` instances in one process conflict like two processes do (`flock`
/// locks belong to the open file).
@Suite struct RenderLockDeadlineTests {
    typealias F = CachingFixtures

    func disk(_ root: String) -> DiskCache {
        DiskCache(path: root, sizeLimit: 1 << 30, lowWater: 0.9, logger: F.logger(LogRecorder()))
    }

    func timedLock(_ cache: DiskCache, _ key: CacheKey, timeout: Double) -> (LockResult, Double) {
        let t0 = Date()
        let result = cache.lock(key, timeout: timeout)
        return (result, Date().timeIntervalSince(t0))
    }

    @Test func withoutAnAnnouncementAWaiterGivesUpAtTheLockTimeout() throws {
        let root = F.folder("lockplain")
        defer { F.remove(root) }
        let key = F.key("rs:1:1")
        guard case let .acquired(held, waited) = disk(root).lock(key, timeout: 1) else { Issue.record("not acquired"); return }
        #expect(!waited)
        let (result, took) = timedLock(disk(root), key, timeout: 0.1)
        guard case .timedOut = result else { Issue.record("expected a time-out, got \(result)"); return }
        #expect(took < 0.5)
        held.release()
    }

    @Test func aWaiterKeepsWaitingWhileTheHolderIsWithinItsDeadline() throws {
        let root = F.folder("lockslow")
        defer { F.remove(root) }
        let key = F.key("rs:2:2")
        guard case let .acquired(held, _) = disk(root).lock(key, timeout: 1) else { Issue.record("not acquired"); return }
        let announced = Date()
        held.announce(until: DiskCache.wallClockMilliseconds() + 700)
        #expect(RenderLock.announcedDeadline(held.fd) != nil)
        // lock_timeout is 0.1 s, but the holder said it may take 0.7 s: the waiter waits that long,
        // then (the holder is stuck past its deadline) takes over.
        let (result, _) = timedLock(disk(root), key, timeout: 0.1)
        let took = Date().timeIntervalSince(announced)   // from the announcement: however late the waiter came
        guard case .timedOut = result else { Issue.record("expected a time-out, got \(result)"); return }
        #expect(took >= 0.6, "gave up after \(took) s, before the announced deadline")
        #expect(took < 2)
        held.release()
    }

    @Test func aWaiterGetsTheLockWhenTheSlowHolderFinishes() throws {
        let root = F.folder("lockdone")
        defer { F.remove(root) }
        let key = F.key("rs:3:3")
        guard case let .acquired(held, _) = disk(root).lock(key, timeout: 1) else { Issue.record("not acquired"); return }
        held.announce(until: DiskCache.wallClockMilliseconds() + 5_000)
        // The holder finishes on another thread (as another process would).
        nonisolated(unsafe) let holder = held
        let releaser = Thread {
            Thread.sleep(forTimeInterval: 0.4)
            holder.release()
        }
        let t0 = Date()
        releaser.start()
        let (result, _) = timedLock(disk(root), key, timeout: 0.1)
        let took = Date().timeIntervalSince(t0)           // from the start of the holder's last 0.4 s
        guard case let .acquired(lock, waited) = result else { Issue.record("expected the lock, got \(result)"); return }
        #expect(waited)
        #expect(took >= 0.3 && took < 3)
        lock.release()
    }

    @Test func aPastOrAbsurdAnnouncementIsIgnored() throws {
        let root = F.folder("lockpast")
        defer { F.remove(root) }
        let key = F.key("rs:4:4")
        guard case let .acquired(held, _) = disk(root).lock(key, timeout: 1) else { Issue.record("not acquired"); return }
        for until in [DiskCache.wallClockMilliseconds() - 1_000, DiskCache.wallClockMilliseconds() + 7_200_000] {
            held.announce(until: until)
            let (result, took) = timedLock(disk(root), key, timeout: 0.1)
            guard case .timedOut = result else { Issue.record("expected a time-out, got \(result)"); return }
            #expect(took < 0.5, "announced \(until): waited \(took) s")
        }
        held.release()
    }

    @Test func theCoordinatorAnnouncesTheRenderTimeout() throws {
        let root = F.folder("lockcoord")
        defer { F.remove(root) }
        let cache = disk(root)
        let coordinator = RenderCoordinator(memory: MemoryCache(), diskCache: cache, renderTimeout: 30, logger: F.logger(LogRecorder()))
        let key = F.key("rs:5:5")
        var seen: Int64?
        _ = try coordinator.fetch(key) {
            // While rendering, the lock file says until when.
            let fd = open(cache.lockPath(key.hex), O_RDONLY)
            defer { close(fd) }
            seen = RenderLock.announcedDeadline(fd)
            return F.image(10)
        }
        let now = DiskCache.wallClockMilliseconds()
        let announced = try #require(seen)
        #expect(announced > now + 25_000 && announced <= now + 32_000)
    }
}
