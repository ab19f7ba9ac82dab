import Glibc
import Testing
@testable import KilnServer

/// Back-pressure: connections queued for `server.queue_timeout` while every worker is busy are
/// answered 503 by the master; a queue that moves is not overload.
@Suite struct SupervisorOverloadTests {
    static func view(_ h: SupervisorHarness, accepted: UInt64?, busy: Set<pid_t>) -> BoardView {
        var slots: [pid_t: Scoreboard.Slot] = [:]
        for w in h.supervisor.workers.values { slots[w.pid] = slot(w.pid, busySince: busy.contains(w.pid) ? 0 : nil) }
        return BoardView(accepted: accepted, slots: slots)
    }

    @Test func connectionsThatWaitedTheQueueTimeoutWhileEveryWorkerIsBusyAreShed() {
        var h = SupervisorHarness(workers: 2, queueTimeout: 1)
        h.send(.start(boards: 8), at: 100)
        // 3 queued at 100 (none accepted yet).
        h.send(.queueSampled(.length(accepted: 0, queued: 3)), at: 100)
        h.send(.queueSampled(.length(accepted: 0, queued: 3)), at: 100.5)
        let allBusy = Self.view(h, accepted: 0, busy: [100, 101])
        #expect(h.overloaded(allBusy, at: 100.9) == false)
        #expect(h.overloaded(allBusy, at: 101.0) == true)
        // A free worker takes the queue: not overload.
        #expect(h.overloaded(Self.view(h, accepted: 0, busy: [100]), at: 101.0) == false)
        // The queue moved: the three were accepted, the one queued since is young.
        h.send(.queueSampled(.length(accepted: 3, queued: 1)), at: 100.8)
        #expect(h.overloaded(Self.view(h, accepted: 3, busy: [100, 101]), at: 101.5) == false)
        #expect(h.overloaded(Self.view(h, accepted: 3, busy: [100, 101]), at: 101.8) == true)
    }

    @Test func withoutTheQueuesLengthItCountsFromWhenTheQueueWasLastSeenEmpty() {
        var h = SupervisorHarness(workers: 1, queueTimeout: 2)
        h.send(.start(boards: 8), at: 100)
        h.send(.queueSampled(.waiting(true)), at: 100)
        h.send(.queueSampled(.waiting(true)), at: 101)
        let busy = Self.view(h, accepted: nil, busy: [100])
        #expect(h.overloaded(busy, at: 101.9) == false)
        #expect(h.overloaded(busy, at: 102) == true)
        h.send(.queueSampled(.waiting(false)), at: 102.1)
        h.send(.queueSampled(.waiting(true)), at: 102.2)
        #expect(h.overloaded(busy, at: 103) == false)
        // An accept that finds the queue empty counts as seeing it empty.
        #expect(h.overloaded(busy, at: 104.2) == true)
        h.send(.shed(count: 0, queueEmptied: true), at: 104.3)
        #expect(h.overloaded(busy, at: 110) == false)
    }

    @Test func sheddingIsCountedAndLoggedAtMostEveryTenSeconds() {
        var h = SupervisorHarness(workers: 1, queueTimeout: 1)
        h.send(.start(boards: 8), at: 100)
        #expect(h.send(.shed(count: 5, queueEmptied: false), at: 200) == [
            .countShed(5),
            .log(.warning, "every worker has been busy for more than server.queue_timeout (1.0 s): answered 5 queued connections with 503 so far", [:]),
        ])
        #expect(h.send(.shed(count: 3, queueEmptied: false), at: 205) == [.countShed(3)])
        #expect(h.send(.shed(count: 0, queueEmptied: false), at: 210).isEmpty)
        #expect(h.send(.shed(count: 2, queueEmptied: false), at: 210).messages
            == ["every worker has been busy for more than server.queue_timeout (1.0 s): answered 10 queued connections with 503 so far"])
    }

    @Test func noQueueTimeoutNoShedding() {
        var h = SupervisorHarness(workers: 1, queueTimeout: 0)
        h.send(.start(boards: 8), at: 100)
        h.send(.queueSampled(.waiting(true)), at: 100)
        #expect(h.overloaded(Self.view(h, accepted: nil, busy: [100]), at: 1000) == false)
    }

    @Test func drainingAndKilledWorkersDoNotCountAsFree() {
        var h = SupervisorHarness(workers: 1, queueTimeout: 1, renderTimeout: 5)
        h.send(.start(boards: 8), at: 100)
        h.send(.queueSampled(.waiting(true)), at: 100)
        // The only worker was killed at its deadline (its slot may still read idle): nobody is free.
        h.send(.scoreboard([100: slot(100, busySince: 90)]), at: 100)
        #expect(h.overloaded(Self.view(h, accepted: nil, busy: []), at: 101) == true)
    }
}
