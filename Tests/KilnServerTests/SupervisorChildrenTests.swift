import Glibc
import Testing
@testable import KilnServer

/// Starting and replacing workers: at once, except in a crash loop; recycling and deadline kills
/// are no crashes; a failed spawn is retried a second later.
@Suite struct SupervisorChildrenTests {
    @Test func startGivesEverySlotAWorkerOnItsOwnScoreboardSlot() {
        var h = SupervisorHarness(workers: 3)
        let actions = h.send(.start(boards: 8), at: 100)
        #expect(actions.spawns == [SpawnRequest(slot: 0, generation: 1, board: 0), SpawnRequest(slot: 1, generation: 1, board: 1),
                                   SpawnRequest(slot: 2, generation: 1, board: 2)])
        #expect(actions.messages == ["started worker 100 (slot 0, generation 1)", "started worker 101 (slot 1, generation 1)",
                                     "started worker 102 (slot 2, generation 1)", "workers of generation 1: 100 101 102"])
        #expect(h.current == [100, 101, 102])
    }

    @Test func aCrashedWorkerIsReplacedAtOnceOnTheFreedSlot() {
        var h = SupervisorHarness(workers: 2)
        h.send(.start(boards: 8), at: 100)
        let exit = h.send(.exited(pid: 100, status: exitStatus(1)), at: 102)
        #expect(exit == [.collectMetrics(board: 0), .countRestarts(.crash, 1),
                         .log(.error, "worker 100 (slot 0) exited with status 1 after 2.0 s; replacing it", [:])])
        let tick = h.send(.tick, at: 102)
        #expect(tick.spawns == [SpawnRequest(slot: 0, generation: 1, board: 0)])
        #expect(tick.messages == ["started worker 102 (slot 0, generation 1)"])
        #expect(h.current == [102, 101])
        #expect(!h.supervisor.inCrashLoop)
    }

    @Test func aWorkerThatRejectsTheConfigurationSaysSo() {
        var h = SupervisorHarness(workers: 1)
        h.send(.start(boards: 8), at: 100)
        let exit = h.send(.exited(pid: 100, status: exitStatus(Worker.ExitStatus.configuration)), at: 100.5)
        #expect(exit.logs(.error) == ["worker 100 (slot 0) exited with status 2 after 0.5 s (it rejected the configuration; fix it and send SIGHUP); replacing it"])
        h.send(.tick, at: 100.5)
        #expect(h.send(.exited(pid: 101, status: SIGSEGV | 0x80), at: 101).logs(.error) == ["worker 101 (slot 0) was killed by SIGSEGV (core dumped) after 0.5 s; replacing it"])
    }

    @Test func recyclingByCountOrMemoryIsAReplacementNotACrash() {
        var h = SupervisorHarness(workers: 2)
        h.send(.start(boards: 8), at: 100)
        // `server.max_requests` and `limits.max_worker_memory` both end in a clean exit.
        let exit = h.send(.exited(pid: 101, status: exitStatus(0)), at: 105)
        #expect(exit == [.collectMetrics(board: 1), .countRestarts(.recycle, 1),
                         .log(.info, "worker 101 (slot 1) exited with status 0 after 5.0 s; replacing it", [:])])
        #expect(h.send(.tick, at: 105).spawns == [SpawnRequest(slot: 1, generation: 1, board: 1)])
        // A worker stopped by a stop signal before its handler was installed: no crash either.
        let stopped = h.send(.exited(pid: 102, status: SIGTERM), at: 106)
        #expect(stopped.contains(.countRestarts(.recycle, 1)))
        #expect(h.send(.tick, at: 106).spawns.count == 1)
        // Many recycles in a row never make a crash loop.
        for i in 0..<20 {
            let pid = h.current[0]
            h.send(.exited(pid: pid, status: exitStatus(0)), at: 107 + Double(i) * 0.01)
            #expect(h.send(.tick, at: 107 + Double(i) * 0.01).spawns.count == 1)
        }
        #expect(h.supervisor.crashTimes.isEmpty && !h.supervisor.inCrashLoop)
    }

    @Test func aCrashLoopStartsAtMostOneWorkerASecondUntilTenCalmSeconds() {
        var h = SupervisorHarness(workers: 2)
        h.send(.start(boards: 8), at: 100)
        // Ten crashes of slot 0 within a second: each replaced at once.
        for i in 1...10 {
            let t = 100 + Double(i) / 10  // exact: the last is 101.0
            h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: t)
            #expect(h.send(.tick, at: t).spawns.count == 1)
        }
        #expect(!h.supervisor.inCrashLoop)
        // The eleventh within 10 s is a crash loop: logged once.
        // The last start was at 101.0.
        let eleventh = h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 101.1)
        #expect(eleventh.logs(.error).last == "crash loop: 11 workers failed within 10 s; starting at most one worker per second")
        #expect(h.supervisor.inCrashLoop)
        #expect(h.send(.tick, at: 101.5).spawns.isEmpty)
        #expect(h.send(.tick, at: 101.99).spawns.isEmpty)
        #expect(h.send(.tick, at: 102.0).spawns.map(\.slot) == [0])
        // Both workers crash: one start a second, never two at once.
        h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 102.2)
        h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 102.2)
        #expect(h.current.isEmpty)
        #expect(h.send(.tick, at: 102.5).spawns.isEmpty)
        #expect(h.send(.tick, at: 103.0).spawns.map(\.slot) == [0])
        #expect(h.send(.tick, at: 103.5).spawns.isEmpty)
        #expect(h.send(.tick, at: 104.0).spawns.map(\.slot) == [1])
        #expect(!h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 104.5).mentions("crash loop"), "logged once")
        #expect(h.send(.tick, at: 104.9).spawns.isEmpty)
        #expect(h.send(.tick, at: 105.0).spawns.map(\.slot) == [0])
        // Ten seconds without a crash (the last at 104.5) end it, at the next start.
        #expect(h.send(.tick, at: 114.4).isEmpty, "nothing pending: nothing to decide yet")
        h.send(.exited(pid: h.current[0], status: exitStatus(0)), at: 114.6)  // a recycle, no crash
        let over = h.send(.tick, at: 114.6)
        #expect(over.messages.first == "crash loop over; replacing workers at once again")
        #expect(over.spawns.count == 1)
        #expect(!h.supervisor.inCrashLoop)
        // Replaced at once again.
        h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 114.7)
        h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 114.7)
        #expect(h.send(.tick, at: 114.7).spawns.map(\.slot) == [0, 1])
    }

    @Test func aFailedSpawnIsRetriedASecondLater() {
        var h = SupervisorHarness(workers: 1)
        h.spawnFailure = "posix_spawn /usr/bin/kiln-worker: No such file or directory"
        let start = h.send(.start(boards: 8), at: 100)
        #expect(start.logs(.error) == ["cannot start a worker: posix_spawn /usr/bin/kiln-worker: No such file or directory; retrying in 1 s"])
        #expect(h.supervisor.workers.isEmpty && h.supervisor.pendingSlots == [0: 101])
        #expect(h.send(.tick, at: 100.5).spawns.isEmpty)
        h.spawnFailure = nil
        let retry = h.send(.tick, at: 101)
        #expect(retry.spawns == [SpawnRequest(slot: 0, generation: 1, board: 0)])
        #expect(h.current == [100])
    }

    @Test func anUnknownChildIsOnlyLogged() {
        var h = SupervisorHarness(workers: 1)
        h.send(.start(boards: 8), at: 100)
        #expect(h.send(.exited(pid: 4242, status: exitStatus(0)), at: 101) == [.log(.debug, "reaped unknown child 4242: exited with status 0", [:])])
        #expect(h.send(.tick, at: 101).isEmpty)
    }
}
