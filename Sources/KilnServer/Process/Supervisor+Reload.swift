import Glibc
import Logging

/// Reloading (SIGHUP): the shell runs the configuration loading again (`.reload`) and reports.
/// A failure is logged and everything kept. Otherwise a new generation of workers starts, and the
/// old one gets a hand-over SIGTERM: each finishes its request and exits, leaving the queue to the
/// new generation; SIGKILL for those still running `shutdown_timeout` later. The listening socket
/// is kept: `listen`, `backlog`, the socket's mode and owner and `status_listen` need a restart.
extension Supervisor {
    mutating func reloaded(_ outcome: ReloadOutcome, now: Double) -> [SupervisorAction] {
        var new: ServerConfiguration
        let newLimits: WorkerLimitsConfiguration
        switch outcome {
        case let .failed(reason):
            return [.log(.error, "reload failed, keeping the running workers: \(reason)")]
        case let .loaded(server, limits):
            new = server
            newLimits = limits
        }
        var actions: [SupervisorAction] = []
        let old = configuration
        if new.statusListen != old.statusListen {
            actions.append(.log(.warning, "status_listen changes only on restart"))
            new.statusListen = old.statusListen
        }
        if new.lookupWorkers != old.lookupWorkers || new.lookupListen != old.lookupListen {
            actions.append(.log(.warning, "lookup_workers and lookup_listen change only on restart (the lane's socket is opened at start)"))
            new.lookupWorkers = old.lookupWorkers
            new.lookupListen = old.lookupListen
        }
        let changed = Supervisor.restartOnlyChanges(old, new)
        if !changed.isEmpty {
            actions.append(.log(.warning, "\(changed.joined(separator: ", ")): listen, backlog, socket_mode, socket_owner and socket_group change only on restart; still listening on \(old.listen), backlog \(old.backlog)"))
            new.listen = old.listen
            new.backlog = old.backlog
            new.socketMode = old.socketMode
            new.socketOwner = old.socketOwner
            new.socketGroup = old.socketGroup
        }
        if new.pidFile != old.pidFile { actions.append(.replacePidFile(new.pidFile)) }
        configuration = new
        limits = newLimits

        let draining = workers.keys.sorted()
        actions.append(.countRestarts(.reload, draining.count))
        generation += 1
        pendingSlots.removeAll()
        crashTimes.removeAll()
        inCrashLoop = false
        for slot in 0..<new.slots { actions.append(spawn(slot: slot)) }
        let deadline = now + new.shutdownTimeout
        for pid in draining {
            workers[pid]?.deadline = deadline
            // The new generation takes the queued connections: the old one does not drain them.
            actions.append(.handOver(pid))
        }
        actions.append(.log(.notice, "generation \(generation) started; \(draining.count) workers of the previous generation finish their requests and exit"))
        actions.append(.logWorkers)
        return actions
    }

    /// The socket settings a reload cannot apply that differ, as `server.listen = <new>`.
    static func restartOnlyChanges(_ old: ServerConfiguration, _ new: ServerConfiguration) -> [String] {
        typealias K = ServerConfiguration.Key
        var out: [String] = []
        if new.listen != old.listen { out.append("\(K.listen.key) = \(new.listen)") }
        if new.backlog != old.backlog { out.append("\(K.backlog.key) = \(new.backlog)") }
        if new.socketMode != old.socketMode { out.append("\(K.socketMode.key) = 0\(String(new.socketMode, radix: 8))") }
        if new.socketOwner != old.socketOwner { out.append("\(K.socketOwner.key) = \"\(new.socketOwner)\"") }
        if new.socketGroup != old.socketGroup { out.append("\(K.socketGroup.key) = \"\(new.socketGroup)\"") }
        return out
    }

    /// Workers handed over (or stopped) whose `shutdown_timeout` has passed: SIGKILL, once.
    mutating func killOverdueDrainingWorkers(now: Double) -> [SupervisorAction] {
        var actions: [SupervisorAction] = []
        for pid in workers.keys.sorted() {
            guard let w = workers[pid], !w.killed, let d = w.deadline, now >= d else { continue }
            actions.append(.log(.warning, "worker \(pid) (generation \(w.generation)) still running shutdown_timeout after SIGTERM; sending SIGKILL"))
            actions.append(.kill(pid, SIGKILL))
            workers[pid]?.killed = true
        }
        return actions
    }
}
