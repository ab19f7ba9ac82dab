import Glibc
import Logging

/// What the master's I/O shell (`Master`) tells the supervisor (`Supervisor.handle(_:now:)`): what
/// the syscalls said, as values, so every rule can be tested without processes, sockets or clocks.
enum SupervisorEvent {
    /// The master listens: start `configuration.workers` workers, on a scoreboard of `boards` slots.
    case start(boards: Int)
    /// A `.spawn` was carried out: the worker runs as `pid`.
    case spawned(SpawnRequest, pid: pid_t)
    /// A `.spawn` failed (posix_spawn's error, as text).
    case spawnFailed(SpawnRequest, reason: String)
    /// `waitpid` reaped `pid` with this wait status.
    case exited(pid: pid_t, status: Int32)
    /// The scoreboard slots of the running workers, by worker pid (read at `now`).
    case scoreboard([pid_t: Scoreboard.Slot])
    /// SIGTERM, SIGINT or SIGQUIT (a second one kills at once).
    case stop(signal: Int32)
    /// SIGHUP.
    case hangUp
    /// What the configuration loading (`.reload`) gave.
    case reloaded(ReloadOutcome)
    /// One turn of the master's loop (every 50 ms or so).
    case tick
    /// The main socket's listen queue, sampled.
    case queueSampled(QueueSample)
    /// The master answered `count` queued connections with 503 itself; `queueEmptied`: an accept
    /// found the queue empty (or a worker was faster).
    case shed(count: Int, queueEmptied: Bool)
}

/// What the supervisor asks the shell to do, in order.
enum SupervisorAction: Equatable {
    /// Start a worker for `request.slot` of `request.generation` on scoreboard slot `request.board`;
    /// answer with `.spawned` or `.spawnFailed` before carrying out the next action.
    case spawn(SpawnRequest)
    case kill(pid_t, Int32)
    /// The reload's SIGTERM (`kiln_send_handover`): finish the request, leave the queue to the new
    /// generation.
    case handOver(pid_t)
    case log(Logger.Level, String, Logger.Metadata)
    /// Log the workers of the current generation (`Supervisor.workersLine`, once the spawns before
    /// it were answered).
    case logWorkers
    /// Unlink the unix socket file (new connections fail at once; queued ones stay).
    case removeSocketFile
    /// Run the configuration loading again; answer with `.reloaded`.
    case reload
    /// `server.pid_file` moved on reload: remove the old one, write the new one.
    case replacePidFile(String)
    /// Wait (blocking) for `pid`, which was sent SIGKILL; answer with `.exited`.
    case awaitExit(pid_t)
    /// Add up what the worker on this scoreboard slot counted (before the slot is reused).
    case collectMetrics(board: Int)
    case countRestarts(MetricsExporter.RestartCause, Int)
    case countShed(Int)
    /// Every worker is gone (or was killed): close up and return this status.
    case exit(Int32)

    static func log(_ level: Logger.Level, _ message: String) -> SupervisorAction {
        .log(level, message, [:])
    }
}

/// One worker to start.
struct SpawnRequest: Equatable {
    var slot: Int
    var generation: Int
    var board: Int
}

enum ReloadOutcome {
    /// The new `[server]` settings and limits (the shell has already made the new settings file).
    case loaded(ServerConfiguration, WorkerLimitsConfiguration)
    /// The loading threw: the error's text.
    case failed(String)
}

/// One look at the listen queue.
enum QueueSample: Equatable {
    /// The kernel told the queue's length; `accepted` (the scoreboard's count of accepted
    /// connections) was read first.
    case length(accepted: UInt64, queued: Int)
    /// Where it does not: whether a poll saw connections waiting.
    case waiting(Bool)
}

/// What the overload rule looks at: the count of accepted connections (nil without a scoreboard)
/// and the scoreboard slots of the workers, by pid.
struct BoardView {
    var accepted: UInt64?
    var slots: [pid_t: Scoreboard.Slot]
}
