import Glibc
import Testing
@testable import KilnServer

/// SIGTERM, SIGINT, SIGQUIT: drain, then kill what is left at `shutdown_timeout`; a second stop
/// kills at once.
@Suite struct SupervisorStopTests {
    @Test func aStopRemovesTheSocketFileFirstThenAsksEveryWorkerToFinish() {
        var h = SupervisorHarness(workers: 2, shutdownTimeout: 10)
        h.send(.start(boards: 8), at: 100)
        let stop = h.send(.stop(signal: SIGTERM), at: 200)
        #expect(stop == [.log(.notice, "received SIGTERM: stopping 2 workers (shutdown_timeout 10.0 s)", [:]),
                         .removeSocketFile, .kill(100, SIGTERM), .kill(101, SIGTERM)])
        #expect(h.supervisor.isStopping)
        // The workers answer what is queued, then exit; none is replaced.
        #expect(h.send(.tick, at: 201).isEmpty)
        let first = h.send(.exited(pid: 100, status: exitStatus(0)), at: 202)
        #expect(first == [.collectMetrics(board: 0), .log(.info, "worker 100 (generation 1) exited with status 0", [:])])
        #expect(h.send(.tick, at: 202).isEmpty, "one still draining: wait")
        h.send(.exited(pid: 101, status: exitStatus(0)), at: 203)
        #expect(h.send(.tick, at: 203) == [.exit(0)])
    }

    @Test func whatStillRunsAtShutdownTimeoutIsKilledAndWaitedFor() {
        var h = SupervisorHarness(workers: 2, shutdownTimeout: 10)
        h.send(.start(boards: 8), at: 100)
        h.send(.stop(signal: SIGQUIT), at: 200)
        #expect(h.send(.tick, at: 209.9).isEmpty)
        let end = h.send(.tick, at: 210)
        #expect(end == [
            .log(.warning, "worker 100 (generation 1) still running after shutdown_timeout; sending SIGKILL", [:]), .kill(100, SIGKILL),
            .log(.warning, "worker 101 (generation 1) still running after shutdown_timeout; sending SIGKILL", [:]), .kill(101, SIGKILL),
            .awaitExit(100), .collectMetrics(board: 0), .log(.info, "worker 100 (generation 1) was killed by SIGKILL", [:]),
            .awaitExit(101), .collectMetrics(board: 1), .log(.info, "worker 101 (generation 1) was killed by SIGKILL", [:]),
            .exit(0),
        ])
        #expect(h.supervisor.workers.isEmpty)
    }

    @Test func aSecondStopKillsAtOnce() {
        var h = SupervisorHarness(workers: 2, shutdownTimeout: 30)
        h.send(.start(boards: 8), at: 100)
        h.send(.stop(signal: SIGTERM), at: 200)
        #expect(h.send(.stop(signal: SIGINT), at: 201) == [.log(.warning, "received SIGINT again: killing 2 workers now", [:])])
        let end = h.send(.tick, at: 201)
        #expect(end.kills == [KillAction(pid: 100, signal: SIGKILL), KillAction(pid: 101, signal: SIGKILL)])
        #expect(end.last == .exit(0))
    }

    @Test func whileStoppingNothingIsStartedReloadedOrShed() {
        var h = SupervisorHarness(workers: 2, shutdownTimeout: 10, queueTimeout: 1)
        h.send(.start(boards: 8), at: 100)
        h.send(.exited(pid: 100, status: exitStatus(1)), at: 199)  // crashed just before: pending
        h.send(.stop(signal: SIGTERM), at: 200)
        #expect(h.supervisor.pendingSlots.isEmpty)
        // A crash during the stop is not replaced.
        #expect(h.send(.exited(pid: 101, status: exitStatus(1)), at: 201) == [
            .collectMetrics(board: 1), .log(.info, "worker 101 (generation 1) exited with status 1", [:]),
        ])
        #expect(h.send(.hangUp, at: 201).isEmpty)
        h.send(.queueSampled(.waiting(true)), at: 190)
        #expect(h.overloaded(BoardView(accepted: nil, slots: [:]), at: 205) == false)
        #expect(h.send(.tick, at: 201) == [.exit(0)])
    }
}
