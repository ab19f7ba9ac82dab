import Glibc
import KilnPipeline
import Testing
@testable import KilnServer

/// `limits.render_timeout` and `limits.slow_log_after`, read off the scoreboard.
@Suite struct SupervisorDeadlineTests {
    @Test func aRequestPastTheRenderTimeoutGetsItsWorkerKilledAndReplacedNotCountedAsACrash() {
        var h = SupervisorHarness(workers: 2, renderTimeout: 1, slowLogAfter: 0)
        h.send(.start(boards: 8), at: 100)
        let trace = String(repeating: "ab", count: 16)
        let busy: [pid_t: Scoreboard.Slot] = [100: slot(100, busySince: 200, stage: .decode, uri: "/rs:3000:0/big.jpg", traceID: trace), 101: slot(101)]
        #expect(h.send(.scoreboard(busy), at: 200.99).isEmpty)
        let kill = h.send(.scoreboard(busy), at: 201.04)
        #expect(kill == [.kill(100, SIGKILL),
                         .log(.error, "worker 100 killed: request /rs:3000:0/big.jpg ran 1.0 s, past limits.render_timeout (1.0 s), in stage decode for 1.0 s",
                              ["request_id": .string(trace)])])
        #expect(h.supervisor.workers[100]?.killed == true)
        #expect(h.send(.scoreboard(busy), at: 201.5).isEmpty, "killed once")
        // Its death is a deadline kill: replaced at once, no crash.
        let exit = h.send(.exited(pid: 100, status: SIGKILL), at: 201.1)
        #expect(exit == [.collectMetrics(board: 0), .countRestarts(.deadline, 1),
                         .log(.info, "worker 100 (slot 0) killed at limits.render_timeout; replacing it", [:])])
        #expect(h.send(.tick, at: 201.1).spawns == [SpawnRequest(slot: 0, generation: 1, board: 0)])
        #expect(h.supervisor.crashTimes.isEmpty)
    }

    @Test func manyDeadlineKillsNeverMakeACrashLoop() {
        var h = SupervisorHarness(workers: 1, renderTimeout: 1)
        h.send(.start(boards: 8), at: 0)
        for i in 0..<15 {
            let t = Double(i) * 2 + 1.5
            let pid = h.current[0]
            #expect(h.send(.scoreboard([pid: slot(pid, busySince: t - 1.5)]), at: t).kills == [KillAction(pid: pid, signal: SIGKILL)])
            h.send(.exited(pid: pid, status: SIGKILL), at: t)
            #expect(h.send(.tick, at: t).spawns.count == 1)
        }
        #expect(!h.supervisor.inCrashLoop)
    }

    @Test func aRequestWaitingForAnotherRenderIsNotKilled() {
        var h = SupervisorHarness(workers: 1, renderTimeout: 1)
        h.send(.start(boards: 8), at: 100)
        #expect(h.send(.scoreboard([100: slot(100, busySince: 100, stage: .wait)]), at: 105).isEmpty)
    }

    @Test func theSlowLogNamesEachRequestOnce() {
        var h = SupervisorHarness(workers: 1, renderTimeout: 60, slowLogAfter: 0.4)
        h.send(.start(boards: 8), at: 100)
        let first: [pid_t: Scoreboard.Slot] = [100: slot(100, busySince: 100, stage: .process, requestID: 7, uri: "/bl:12/a.jpg")]
        #expect(h.send(.scoreboard(first), at: 100.3).isEmpty)
        #expect(h.send(.scoreboard(first), at: 100.5) == [
            .log(.warning, "slow request: worker 100 has run /bl:12/a.jpg for 0.5 s (limits.slow_log_after 0.4 s), now in stage process", [:]),
        ])
        #expect(h.send(.scoreboard(first), at: 103).isEmpty, "logged once per request")
        let next: [pid_t: Scoreboard.Slot] = [100: slot(100, busySince: 104, requestID: 8, uri: "/b.jpg")]
        #expect(h.send(.scoreboard(next), at: 104.5).messages == ["slow request: worker 100 has run /b.jpg for 0.5 s (limits.slow_log_after 0.4 s), now in stage decode"])
    }

    @Test func idleWorkersSlotsOfOthersAndNoLimitsAreLeftAlone() {
        var h = SupervisorHarness(workers: 2, renderTimeout: 1, slowLogAfter: 0.5)
        h.send(.start(boards: 8), at: 100)
        // Slot read while another process (a replacement) owns it: not this worker's request.
        let readings: [pid_t: Scoreboard.Slot] = [100: slot(100), 101: slot(999, busySince: 100)]
        #expect(h.send(.scoreboard(readings), at: 110).isEmpty)
        var none = SupervisorHarness(workers: 1, renderTimeout: 0, slowLogAfter: 0)
        none.send(.start(boards: 8), at: 100)
        #expect(!none.supervisor.watchesRequests)
        #expect(none.send(.scoreboard([100: slot(100, busySince: 0)]), at: 1000).isEmpty)
    }
}
