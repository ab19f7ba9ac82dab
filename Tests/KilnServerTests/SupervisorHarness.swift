import Glibc
import KilnPipeline
import Logging
@testable import KilnServer

/// Drives a `Supervisor` as `Master` does, without processes: a `.spawn` is answered at once with
/// the next pid (or a failure), `.awaitExit` with death by SIGKILL, `.logWorkers` becomes its line.
/// Every action is recorded in order; `now` is always explicit.
struct SupervisorHarness {
    var supervisor: Supervisor
    var nextPID: pid_t = 100
    /// Fail every spawn with this reason (posix_spawn's error).
    var spawnFailure: String?

    init(workers: Int = 2, shutdownTimeout: Double = 10, queueTimeout: Double = 1,
         renderTimeout: Double = 0, slowLogAfter: Double = 0) {
        var server = ServerConfiguration()
        server.workers = workers
        server.shutdownTimeout = shutdownTimeout
        server.queueTimeout = queueTimeout
        var limits = WorkerLimitsConfiguration()
        limits.renderTimeout = renderTimeout
        limits.slowLogAfter = slowLogAfter
        supervisor = Supervisor(configuration: server, limits: limits)
    }

    /// Hands `event` to the supervisor at `now`, answers what needs an answer, returns every action.
    @discardableResult
    mutating func send(_ event: SupervisorEvent, at now: Double) -> [SupervisorAction] {
        var done: [SupervisorAction] = []
        perform(supervisor.handle(event, now: now), at: now, into: &done)
        return done
    }

    private mutating func perform(_ actions: [SupervisorAction], at now: Double, into done: inout [SupervisorAction]) {
        for action in actions {
            switch action {
            case let .spawn(request):
                done.append(action)
                let answer: SupervisorEvent
                if let spawnFailure {
                    answer = .spawnFailed(request, reason: spawnFailure)
                } else {
                    answer = .spawned(request, pid: nextPID)
                    nextPID += 1
                }
                perform(supervisor.handle(answer, now: now), at: now, into: &done)
            case .logWorkers:
                done.append(.log(.info, supervisor.workersLine, [:]))
            case let .awaitExit(pid):
                done.append(action)
                perform(supervisor.handle(.exited(pid: pid, status: SIGKILL), now: now), at: now, into: &done)
            default:
                done.append(action)
            }
        }
    }

    /// The overload rule's answer (mutating: it forgets accepted connections).
    mutating func overloaded(_ view: BoardView, at now: Double) -> Bool {
        supervisor.isOverloaded(view, now: now)
    }

    /// The running workers' pids, of the current generation, by slot.
    var current: [pid_t] { supervisor.currentWorkers.sorted { $0.slot < $1.slot }.map(\.pid) }
}

/// waitpid statuses as the kernel encodes them.
func exitStatus(_ code: Int32) -> Int32 { code << 8 }

extension Array where Element == SupervisorAction {
    var messages: [String] {
        compactMap { if case let .log(_, message, _) = $0 { message } else { nil } }
    }

    func logs(_ level: Logger.Level) -> [String] {
        compactMap { if case let .log(l, message, _) = $0, l == level { message } else { nil } }
    }

    var spawns: [SpawnRequest] {
        compactMap { if case let .spawn(request) = $0 { request } else { nil } }
    }

    /// (pid, signal) of every `.kill`.
    var kills: [KillAction] {
        compactMap { if case let .kill(pid, sig) = $0 { KillAction(pid: pid, signal: sig) } else { nil } }
    }

    func mentions(_ text: String) -> Bool { messages.contains { $0.contains(text) } }
}

struct KillAction: Equatable {
    var pid: pid_t
    var signal: Int32
}

/// A scoreboard slot of worker `pid`: in a request since `started` (seconds, the supervisor's
/// clock) in `stage`, or idle.
func slot(_ pid: pid_t, busySince started: Double? = nil, stage: WorkerActivity = .decode, requestID: UInt64 = 1,
          uri: String = "/w:100/a.jpg", traceID: String = "") -> Scoreboard.Slot {
    let ns = started.map { Int64(($0 * 1e9).rounded()) }
    return Scoreboard.Slot(pid: pid, stage: started == nil ? .idle : stage, requestStart: ns, stageStart: ns ?? 0,
                           idleSince: 0, requestID: requestID, requestsDone: 0, uri: started == nil ? "" : uri,
                           detail: "", traceID: traceID)
}
