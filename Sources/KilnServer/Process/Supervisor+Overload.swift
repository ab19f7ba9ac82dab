import Glibc
import Logging

/// Back-pressure: the master answers the connections queued on the main socket with 503 itself
/// once connections have waited there for `server.queue_timeout` while every worker of the current
/// generation was busy (an overloaded server says so at once instead of letting requests wait in
/// the listen queue until nginx gives up). A queue that is never empty but moves (more connections
/// than workers, short renders) is not overload: `QueueWaitTracker` tells how long the oldest
/// queued connection has waited where the kernel tells the queue's length; elsewhere the queue
/// counts as waiting since it was last seen empty. Never while stopping.
extension Supervisor {
    /// Whether to answer the next queued connection with 503 (the shell accepts and answers while
    /// this holds, up to a batch per loop turn, and polls the main socket only then).
    mutating func isOverloaded(_ view: BoardView, now: Double) -> Bool {
        let timeout = configuration.queueTimeout
        guard stopDeadline == nil, timeout > 0 else { return false }
        guard overload.hasWaited(timeout, now: now, accepted: view.accepted) else { return false }
        // Every worker in a request (or none runs). A slot another process took is not looked at.
        return currentWorkers.allSatisfy { w in
            guard let slot = view.slots[w.pid], slot.pid == w.pid else { return true }
            return slot.isBusy
        }
    }
}

/// What the master remembers about its listen queue, and the shedding it logs.
struct OverloadWatch {
    /// How long queued connections have waited, when the kernel tells the queue's length.
    var waits = QueueWaitTracker()
    /// Since when the queue has held connections without once being seen empty (where the length
    /// is unknown).
    var busySince: Double?
    /// Whether the last sample told the queue's length (else `busySince` decides).
    var lengthKnown = false
    /// Connections answered with 503 so far, and when that was last logged.
    var answers = 0
    var logged = -Double.infinity
    /// The shedding is logged at most this often.
    static let logInterval = 10.0

    mutating func record(_ sample: QueueSample, now: Double) {
        switch sample {
        case let .length(accepted, queued):
            lengthKnown = true
            waits.record(now: now, accepted: accepted, queued: queued)
        case let .waiting(waiting):
            lengthKnown = false
            if !waiting {
                busySince = nil
            } else if busySince == nil {
                busySince = now
            }
        }
    }

    /// A connection has waited in the queue for `timeout`: by `waits`, or, where the length is
    /// unknown, the queue was never seen empty meanwhile.
    mutating func hasWaited(_ timeout: Double, now: Double, accepted: UInt64?) -> Bool {
        if lengthKnown, let accepted { return waits.oldestWait(now: now, accepted: accepted) >= timeout }
        guard let since = busySince else { return false }
        return now - since >= timeout
    }

    /// The status page's look: records the sample, returns the oldest wait.
    mutating func oldestWait(now: Double, accepted: UInt64, queued: Int) -> Double {
        waits.record(now: now, accepted: accepted, queued: queued)
        return waits.oldestWait(now: now, accepted: accepted)
    }

    mutating func answered(_ count: Int, queueEmptied: Bool, queueTimeout: Double, now: Double) -> [SupervisorAction] {
        if queueEmptied { busySince = nil }
        guard count > 0 else { return [] }
        answers += count
        var actions: [SupervisorAction] = [.countShed(count)]
        if now - logged >= OverloadWatch.logInterval {
            logged = now
            actions.append(.log(.warning, "every worker has been busy for more than server.queue_timeout (\(Supervisor.format(queueTimeout)) s): answered \(answers) queued connections with 503 so far"))
        }
        return actions
    }
}
