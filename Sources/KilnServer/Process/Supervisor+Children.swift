import CKilnProcessShims
import Glibc
import Logging

/// Starting workers and replacing the ones that exit: at once, except in a crash loop (more than
/// `crashLimit` crashes within `crashWindow` seconds), where at most one worker starts a second
/// until a whole window passes without a crash. A worker killed at `limits.render_timeout` or
/// recycled (a clean exit: `server.max_requests`, `limits.max_worker_memory`) is replaced at once
/// and is no crash. A failed posix_spawn is retried a second later.
extension Supervisor {
    /// A `.spawn` for `slot` of the current generation, on the lowest free scoreboard slot.
    mutating func spawn(slot: Int) -> SupervisorAction {
        let used = Set(workers.values.map(\.board)).union(spawning)
        let board = (0..<boards).first { !used.contains($0) } ?? 0
        spawning.insert(board)
        return .spawn(SpawnRequest(slot: slot, generation: generation, board: board))
    }

    mutating func spawned(_ request: SpawnRequest, pid: pid_t, now: Double) -> [SupervisorAction] {
        spawning.remove(request.board)
        lastSpawn = now
        workers[pid] = WorkerProcess(pid: pid, slot: request.slot, generation: request.generation, started: now, board: request.board)
        return [.log(.info, "started worker \(pid) (slot \(request.slot), generation \(request.generation))")]
    }

    mutating func spawnFailed(_ request: SpawnRequest, reason: String, now: Double) -> [SupervisorAction] {
        spawning.remove(request.board)
        pendingSlots[request.slot] = now + Supervisor.spawnRetryDelay
        return [.log(.error, "cannot start a worker: \(reason); retrying in 1 s")]
    }

    mutating func exited(_ pid: pid_t, status: Int32, now: Double) -> [SupervisorAction] {
        guard let w = workers.removeValue(forKey: pid) else {
            return [.log(.debug, "reaped unknown child \(pid): \(WaitStatus.describe(status))")]
        }
        // Its last counts, before the slot goes to another worker.
        var actions: [SupervisorAction] = [.collectMetrics(board: w.board)]
        let lived = Supervisor.format(now - w.started)
        let how = WaitStatus.describe(status)
        let replace = stopDeadline == nil && w.generation == generation && w.deadline == nil
        guard replace else {
            actions.append(.log(.info, "worker \(pid) (generation \(w.generation)) \(how)"))
            return actions
        }
        if w.killedAtDeadline {
            actions.append(.countRestarts(.deadline, 1))
            actions.append(.log(.info, "worker \(pid) (slot \(w.slot)) killed at limits.render_timeout; replacing it"))
        } else if WaitStatus.isCrash(status) {
            actions.append(.countRestarts(.crash, 1))
            let hint = kiln_wifexited(status) != 0 && kiln_wexitstatus(status) == Worker.ExitStatus.configuration
                ? " (it rejected the configuration; fix it and send SIGHUP)" : ""
            actions.append(.log(.error, "worker \(pid) (slot \(w.slot)) \(how) after \(lived) s\(hint); replacing it"))
            actions += recordCrash(now: now)
        } else {
            actions.append(.countRestarts(.recycle, 1))
            actions.append(.log(.info, "worker \(pid) (slot \(w.slot)) \(how) after \(lived) s; replacing it"))
        }
        if w.slot < configuration.slots { pendingSlots[w.slot] = now }
        return actions
    }

    mutating func recordCrash(now: Double) -> [SupervisorAction] {
        crashTimes.append(now)
        crashTimes.removeAll { now - $0 > Supervisor.crashWindow }
        guard crashTimes.count > Supervisor.crashLimit && !inCrashLoop else { return [] }
        inCrashLoop = true
        return [.log(.error, "crash loop: \(crashTimes.count) workers failed within \(Int(Supervisor.crashWindow)) s; starting at most one worker per second")]
    }

    mutating func startPendingWorkers(now: Double) -> [SupervisorAction] {
        guard !pendingSlots.isEmpty else { return [] }
        var actions: [SupervisorAction] = []
        if inCrashLoop {
            // Leave the crash loop only after a whole window without a crash.
            crashTimes.removeAll { now - $0 > Supervisor.crashWindow }
            if crashTimes.isEmpty {
                inCrashLoop = false
                actions.append(.log(.notice, "crash loop over; replacing workers at once again"))
            }
        }
        for slot in pendingSlots.keys.sorted() {
            guard let notBefore = pendingSlots[slot], now >= notBefore else { continue }
            if inCrashLoop && now - lastSpawn < Supervisor.crashLoopSpawnInterval { break }
            pendingSlots[slot] = nil
            actions.append(spawn(slot: slot))
            if inCrashLoop { break }
        }
        return actions
    }
}
