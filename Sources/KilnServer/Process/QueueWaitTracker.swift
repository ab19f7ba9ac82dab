/// How long the oldest connection in the listen queue has waited, from samples of the queue's
/// length and of a count of accepted connections (the master's back-pressure, `server.queue_timeout`).
///
/// The kernel does not timestamp queued connections, but it says how many there are
/// (`kiln_listen_queue_length`), the queue is first in, first out, and every process that accepts
/// from it adds one to a shared counter (the scoreboard's `acceptedConnections`). A sample
/// "at time t, `accepted` connections had been taken and `queued` were waiting" gives a ticket:
/// the connections queued at t are all gone once the counter reaches `accepted + queued`. While it
/// has not, at least one connection queued at t is still there and has waited `now - t` or more.
///
/// So the master sheds (503) only connections that really waited `queue_timeout`: a saturated
/// server whose queue never empties but moves (8 connections on 2 workers rendering 25 ms
/// requests) is not overloaded, while one whose workers are stuck on long renders is.
struct QueueWaitTracker {
    private struct Sample {
        var time: Double
        var ticket: UInt64
    }

    /// Oldest first, at most `capacity`.
    private var samples: [Sample] = []
    private var head = 0
    static let capacity = 4096

    /// Records one sample: `accepted` read before `queued` (an accept between the two reads then
    /// makes the ticket smaller, never larger: a miss, not a false alarm).
    mutating func record(now: Double, accepted: UInt64, queued: Int) {
        forget(accepted: accepted)
        guard queued > 0 else { return }
        let ticket = accepted &+ UInt64(queued)
        // Nothing new arrived since the last sample: its time stays the older, truer bound.
        if let last = samples.last, head < samples.count, last.ticket >= ticket { return }
        // Full: the newest arrivals go unrecorded until older samples are forgotten; their wait is
        // then counted from a later sample (underestimated: a late 503, never a wrong one).
        if samples.count - head >= QueueWaitTracker.capacity { return }
        samples.append(Sample(time: now, ticket: ticket))
    }

    /// The longest time a connection still in the queue has waited, at least: 0 when none is
    /// known to wait.
    mutating func oldestWait(now: Double, accepted: UInt64) -> Double {
        forget(accepted: accepted)
        guard head < samples.count else { return 0 }
        return max(0, now - samples[head].time)
    }

    /// Drops every sample whose connections have all been accepted.
    private mutating func forget(accepted: UInt64) {
        while head < samples.count && samples[head].ticket <= accepted { head += 1 }
        if head == samples.count {
            samples.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 1024 {
            samples.removeFirst(head)
            head = 0
        }
    }

    mutating func reset() {
        samples.removeAll(keepingCapacity: true)
        head = 0
    }
}
