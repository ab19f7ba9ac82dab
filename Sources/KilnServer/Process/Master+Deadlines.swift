import KilnHTTP
import Glibc
import KilnPipeline
import Logging

/// The master's reading of the scoreboard: the render deadline (`limits.render_timeout`) and the
/// slow log (`limits.slow_log_after`), php-fpm's `request_terminate_timeout` and
/// `request_slowlog_timeout`.
///
/// A request runs in a worker from the moment it was read (the worker publishes its URI and start
/// time) until its answer is written, less the time it waited for another process rendering the
/// same variant. Past `slow_log_after` the master logs it once, with its
/// stage; past `render_timeout` it sends SIGKILL (a decoder loop cannot be cancelled from inside,
/// and a stopped process only dies by SIGKILL), names the URL and the stage it was stuck in, and
/// starts a fresh worker in its place. Only that request fails: nginx answers 502 for it. The
/// killed worker's render lock goes with it, so a request waiting for the same variant takes over.
extension Master {
    func watchScoreboard() {
        guard let scoreboard else { return }
        let timeout = workerLimits.renderTimeout
        let slowAfter = workerLimits.slowLogAfter
        guard timeout > 0 || slowAfter > 0 else { return }
        let now = Scoreboard.now()
        for (pid, w) in workers where !w.killed {
            guard let slot = scoreboard.read(w.board), slot.pid == pid, let start = slot.requestStart else { continue }
            let running = Double(now - start) / 1e9
            // A request waiting for another process's render of the same variant is not killed: that
            // wait is bounded by the holder's deadline (or cache.lock_timeout), and it is taken off
            // the request's clock when it ends (`RequestMonitor.lockTaken`).
            if timeout > 0 && running >= timeout && slot.stage != .wait {
                kill(pid, SIGKILL)
                workers[pid]?.killed = true
                workers[pid]?.killedAtDeadline = true
                logger.error("worker \(pid) killed: request \(slot.uri) ran \(Master.format(running)) s, past limits.render_timeout (\(Master.format(timeout)) s), in stage \(slot.stageDescription) for \(Master.format(Double(now - slot.stageStart) / 1e9)) s",
                             metadata: Master.requestMetadata(slot))
            } else if slowAfter > 0 && running >= slowAfter && w.slowLogged != slot.requestID {
                workers[pid]?.slowLogged = slot.requestID
                logger.warning("slow request: worker \(pid) has run \(slot.uri) for \(Master.format(running)) s (limits.slow_log_after \(Master.format(slowAfter)) s), now in stage \(slot.stageDescription)",
                               metadata: Master.requestMetadata(slot))
            }
        }
    }

    /// `request_id` of the slot's request, as on the worker's access line (joins the two, and
    /// nginx's log with `$request_id`).
    static func requestMetadata(_ slot: Scoreboard.Slot) -> Logger.Metadata {
        slot.traceID.isEmpty ? [:] : ["request_id": .string(slot.traceID)]
    }

    /// The scoreboard slots of the running workers of the current generation.
    func currentSlots() -> [(pid: pid_t, slot: Scoreboard.Slot)] {
        guard let scoreboard else { return [] }
        return workers.values.filter { $0.generation == generation && !$0.killed && $0.deadline == nil }
            .compactMap { w in
                guard let s = scoreboard.read(w.board), s.pid == w.pid else { return nil }
                return (w.pid, s)
            }
    }
}
