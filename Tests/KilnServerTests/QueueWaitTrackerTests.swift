import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

@Suite struct QueueWaitTrackerTests {
    @Test func aQueueThatMovesHasNoOldWaiter() {
        // 2 workers take a connection every 25 ms each; 6 always wait (8 clients).
        var t = QueueWaitTracker()
        var accepted: UInt64 = 0
        var worst = 0.0
        for step in 0..<200 {
            let now = Double(step) * 0.05
            accepted += 4
            t.record(now: now, accepted: accepted, queued: 6)
            worst = max(worst, t.oldestWait(now: now, accepted: accepted))
        }
        // Each sample's 6 connections are gone two samples later.
        #expect(worst <= 0.1)
    }

    @Test func aStuckQueueWaitsSinceItsFirstSample() {
        var t = QueueWaitTracker()
        for step in 0..<30 { t.record(now: 10 + Double(step) * 0.05, accepted: 7, queued: 5 + step) }
        #expect(abs(t.oldestWait(now: 12, accepted: 7) - 2) < 1e-9)
        // The first 5 taken: the oldest remaining arrived by the second sample.
        #expect(abs(t.oldestWait(now: 12, accepted: 12) - 1.95) < 1e-9)
        // All taken: nobody waits.
        #expect(t.oldestWait(now: 12, accepted: 7 + 34) == 0)
    }

    @Test func anEmptyQueueRecordsNothing() {
        var t = QueueWaitTracker()
        t.record(now: 1, accepted: 3, queued: 0)
        #expect(t.oldestWait(now: 100, accepted: 3) == 0)
    }

    @Test func aSmallerTicketKeepsTheOlderSample() {
        // An accept between reading the counter and the length makes a later ticket smaller.
        var t = QueueWaitTracker()
        t.record(now: 1, accepted: 10, queued: 4)
        t.record(now: 2, accepted: 10, queued: 3)
        #expect(t.oldestWait(now: 3, accepted: 13) == 2)
        #expect(t.oldestWait(now: 3, accepted: 14) == 0)
    }

    @Test func aFullTrackerKeepsItsOldestSamples() {
        var t = QueueWaitTracker()
        for i in 0..<(QueueWaitTracker.capacity + 100) {
            t.record(now: Double(i), accepted: 0, queued: i + 1)
        }
        let now = Double(QueueWaitTracker.capacity + 100)
        #expect(t.oldestWait(now: now, accepted: 0) == now)
        // Once every recorded ticket is met, the unrecorded newest do not count as old.
        #expect(t.oldestWait(now: now, accepted: UInt64(QueueWaitTracker.capacity)) == 0)
    }
}
