import Glibc
import Logging

/// The master's decisions, apart from its I/O: which workers run, which to start, kill, hand over
/// or replace, when to stop, and what to log. A value: `Master` turns signals, `waitpid`, the
/// scoreboard and the listen queue into `SupervisorEvent`s, calls `handle(_:now:)` and carries out
/// the `SupervisorAction`s it returns, in order. Time is always passed in (monotonic seconds, the
/// clock of the scoreboard), so the rules are tested without processes or waiting.
///
/// The rules, one file each:
/// - children (`Supervisor+Children`): start, replace at once, crash loop: more than 10 crashes
///   (a non-zero status or a fatal signal) within 10 s start at most one worker a second until
///   10 s pass without a crash. A worker killed at its deadline or recycled is no crash.
/// - deadlines (`Supervisor+Deadlines`): a request past `limits.render_timeout` gets its worker
///   SIGKILL (then replaced), past `limits.slow_log_after` one slow-log line.
/// - stop (`Supervisor+Stop`): remove the socket file, SIGTERM every worker, SIGKILL what is left
///   after `shutdown_timeout`, exit once all are gone; a second stop signal kills at once.
/// - reload (`Supervisor+Reload`): a good configuration starts a new generation and hands the old
///   one over (SIGKILL after `shutdown_timeout`); a bad one is logged, everything kept.
/// - overload (`Supervisor+Overload`, `OverloadWatch`): connections queued for
///   `server.queue_timeout` while every worker is busy are answered 503 by the master.
struct Supervisor {
    struct WorkerProcess: Equatable {
        var pid: pid_t
        var slot: Int
        var generation: Int
        var started: Double
        /// Sent SIGTERM (reload or stop); killed when `deadline` passes.
        var deadline: Double?
        var killed = false
        /// Its slot in the scoreboard.
        var board: Int
        /// Killed by the master at `limits.render_timeout`: replaced, not counted as a crash.
        var killedAtDeadline = false
        /// The scoreboard request id last written to the slow log.
        var slowLogged: UInt64 = 0
    }

    static let crashWindow = 10.0
    static let crashLimit = 10
    /// In a crash loop, at most one start per this many seconds.
    static let crashLoopSpawnInterval = 1.0
    /// A failed posix_spawn is retried after this many seconds.
    static let spawnRetryDelay = 1.0

    /// The `[server]` settings in force (reload changes them, except what needs a restart).
    var configuration: ServerConfiguration
    /// `limits.render_timeout`, `limits.slow_log_after` (the master enforces them).
    var limits: WorkerLimitsConfiguration
    /// Scoreboard slots (1 without a scoreboard).
    var boards = 1
    var workers: [pid_t: WorkerProcess] = [:]
    var generation = 1
    /// Slots of the current generation waiting for a worker, with the earliest start time.
    var pendingSlots: [Int: Double] = [:]
    /// Scoreboard slots of `.spawn`s not answered yet.
    var spawning: Set<Int> = []
    var crashTimes: [Double] = []
    var inCrashLoop = false
    var lastSpawn = -Double.infinity
    /// Set by the first stop signal: when the workers left are killed.
    var stopDeadline: Double?
    var overload = OverloadWatch()

    init(configuration: ServerConfiguration, limits: WorkerLimitsConfiguration) {
        self.configuration = configuration
        self.limits = limits
    }

    var isStopping: Bool { stopDeadline != nil }

    /// The running workers of the current generation (not killed, not draining).
    var currentWorkers: [WorkerProcess] {
        workers.values.filter { $0.generation == generation && !$0.killed && $0.deadline == nil }
    }

    /// `workers of generation 2: 101 102` (by slot).
    var workersLine: String {
        let current = workers.values.filter { $0.generation == generation }.sorted { $0.slot < $1.slot }
        return "workers of generation \(generation): \(current.map { String($0.pid) }.joined(separator: " "))"
    }

    mutating func handle(_ event: SupervisorEvent, now: Double) -> [SupervisorAction] {
        switch event {
        case let .start(boards):
            self.boards = max(1, boards)
            return (0..<configuration.slots).map { spawn(slot: $0) } + [.logWorkers]
        case let .spawned(request, pid):
            return spawned(request, pid: pid, now: now)
        case let .spawnFailed(request, reason):
            return spawnFailed(request, reason: reason, now: now)
        case let .exited(pid, status):
            return exited(pid, status: status, now: now)
        case let .scoreboard(slots):
            return watch(slots, now: now)
        case let .stop(signal):
            return stop(signal, now: now)
        case .hangUp:
            guard !isStopping else { return [] }
            return [.log(.notice, "received SIGHUP: reloading the configuration"), .reload]
        case let .reloaded(outcome):
            return reloaded(outcome, now: now)
        case .tick:
            return tick(now: now)
        case let .queueSampled(sample):
            overload.record(sample, now: now)
            return []
        case let .shed(count, emptied):
            return overload.answered(count, queueEmptied: emptied, queueTimeout: configuration.queueTimeout, now: now)
        }
    }

    /// Every turn of the loop: stop when done or overdue; otherwise start the workers due and kill
    /// draining ones past their deadline.
    mutating func tick(now: Double) -> [SupervisorAction] {
        if let deadline = stopDeadline {
            if workers.isEmpty { return [.exit(0)] }
            if now >= deadline { return killStragglers() + [.exit(0)] }
            return []
        }
        return startPendingWorkers(now: now) + killOverdueDrainingWorkers(now: now)
    }

    /// Seconds to a tenth, as every master log line writes them: `1.3`.
    static func format(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}
