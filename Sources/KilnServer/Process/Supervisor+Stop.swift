import Glibc
import Logging

/// Stopping (SIGTERM, SIGINT, SIGQUIT), losing nothing queued: remove the unix socket file first
/// (a new connect fails at once: nginx answers 502 without waiting), then SIGTERM every worker:
/// each finishes its request, answers the connections still queued, and exits. The socket stays
/// open until every worker is gone (closing it would reset the queued connections). What still
/// runs `shutdown_timeout` later gets SIGKILL. Exit once no worker is left. A second stop signal
/// kills at once.
extension Supervisor {
    mutating func stop(_ sig: Int32, now: Double) -> [SupervisorAction] {
        let name = WaitStatus.signalName(sig)
        guard stopDeadline == nil else {
            stopDeadline = now
            return [.log(.warning, "received \(name) again: killing \(workers.count) workers now")]
        }
        var actions: [SupervisorAction] = [
            .log(.notice, "received \(name): stopping \(workers.count) workers (shutdown_timeout \(configuration.shutdownTimeout) s)"),
        ]
        stopDeadline = now + configuration.shutdownTimeout
        pendingSlots.removeAll()
        // No shutdown() and no close(): either would reset the connections still queued.
        actions.append(.removeSocketFile)
        for pid in workers.keys.sorted() { actions.append(.kill(pid, SIGTERM)) }
        return actions
    }

    /// At the stop deadline: SIGKILL every worker left and wait for each.
    mutating func killStragglers() -> [SupervisorAction] {
        let pids = workers.keys.sorted()
        var actions: [SupervisorAction] = []
        for pid in pids {
            let w = workers[pid]!
            actions.append(.log(.warning, "worker \(pid) (generation \(w.generation)) still running after shutdown_timeout; sending SIGKILL"))
            actions.append(.kill(pid, SIGKILL))
        }
        return actions + pids.map { .awaitExit($0) }
    }
}
