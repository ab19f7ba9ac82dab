import Glibc
import Logging

/// The master's reading of the scoreboard: the render deadline (`limits.render_timeout`) and the
/// slow log (`limits.slow_log_after`), php-fpm's `request_terminate_timeout` and
/// `request_slowlog_timeout`.
///
/// A request runs in a worker from the moment it was read (the worker publishes its URI and start
/// time) until its answer is written, less the time it waited for another process rendering the
/// same variant. Past `slow_log_after` the master logs it once, with its stage; past
/// `render_timeout` it sends SIGKILL (a decoder loop cannot be cancelled from inside, and a
/// stopped process only dies by SIGKILL), names the URL and the stage it was stuck in, and starts
/// a fresh worker in its place (not counted as a crash). Only that request fails: nginx answers 502
/// for it. The killed worker's render lock goes with it, so a request waiting for the same variant
/// takes over. A worker killed while decoding leaves its decode marker in the disk cache
/// (`RenderCoordinator.decoding`): the next request for any size of that source remembers the
/// source as a failure instead of decoding it again.
extension Supervisor {
    /// Whether `.scoreboard` readings matter (else the shell need not read the slots).
    var watchesRequests: Bool { limits.renderTimeout > 0 || limits.slowLogAfter > 0 }

    mutating func watch(_ slots: [pid_t: Scoreboard.Slot], now: Double) -> [SupervisorAction] {
        let timeout = limits.renderTimeout
        let slowAfter = limits.slowLogAfter
        guard timeout > 0 || slowAfter > 0 else { return [] }
        // The scoreboard's clock in nanoseconds (the same CLOCK_MONOTONIC as `now`).
        let nowNS = Int64((now * 1e9).rounded())
        var actions: [SupervisorAction] = []
        for pid in workers.keys.sorted() {
            guard let w = workers[pid], !w.killed, let slot = slots[pid], slot.pid == pid,
                  let start = slot.requestStart else { continue }
            let running = Double(nowNS - start) / 1e9
            // A request waiting for another process's render of the same variant is not killed: that
            // wait is bounded by the holder's deadline (or cache.lock_timeout), and it is taken off
            // the request's clock when it ends (`RequestMonitor.lockTaken`).
            if timeout > 0 && running >= timeout && slot.stage != .wait {
                workers[pid]?.killed = true
                workers[pid]?.killedAtDeadline = true
                actions.append(.kill(pid, SIGKILL))
                let inStage = Supervisor.format(Double(nowNS - slot.stageStart) / 1e9)
                actions.append(.log(.error, "worker \(pid) killed: request \(slot.uri) ran \(Supervisor.format(running)) s, past limits.render_timeout (\(Supervisor.format(timeout)) s), in stage \(slot.stageDescription) for \(inStage) s",
                                    Supervisor.requestMetadata(slot)))
            } else if slowAfter > 0 && running >= slowAfter && w.slowLogged != slot.requestID {
                workers[pid]?.slowLogged = slot.requestID
                actions.append(.log(.warning, "slow request: worker \(pid) has run \(slot.uri) for \(Supervisor.format(running)) s (limits.slow_log_after \(Supervisor.format(slowAfter)) s), now in stage \(slot.stageDescription)",
                                    Supervisor.requestMetadata(slot)))
            }
        }
        return actions
    }

    /// `request_id` of the slot's request, as on the worker's access line (joins the two, and
    /// nginx's log with `$request_id`).
    static func requestMetadata(_ slot: Scoreboard.Slot) -> Logger.Metadata {
        slot.traceID.isEmpty ? [:] : ["request_id": .string(slot.traceID)]
    }
}
