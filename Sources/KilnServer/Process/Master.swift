import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPOSIX
import KilnModel
import Logging

/// The supervising process: owns the listening socket, starts `workers` worker processes and keeps
/// that many running. This class is its I/O shell: every decision (replace, throttle a crash loop,
/// kill at a deadline, stop, reload, shed) is `Supervisor`'s, a value that takes events and returns
/// actions; the shell turns syscalls into those events and carries the actions out.
///
/// Workers are started with `posix_spawn` of the worker executable (`kiln serve` gives the
/// `kiln-worker` next to its own executable, `workerExecutable`; never `fork`), the listening
/// socket on fd 0, the validated settings on fd 3 (`SettingsSnapshot`, so a replacement worker
/// never picks up an edited file before SIGHUP), an empty signal mask and default signal actions.
/// The master is single-threaded and handles signals synchronously (blocked, then taken with
/// `sigtimedwait` at every turn of its loop, at most 50 ms apart):
///
/// - SIGCHLD: reap (`.exited`); see `Supervisor+Children` for replacing and the crash loop.
/// - SIGTERM, SIGINT, SIGQUIT: stop, losing nothing queued (`Supervisor+Stop`). The workers finish
///   their request, then answer the connections still queued on the socket until the queue is
///   empty, and exit; the socket stays open until every worker is gone. Then close the socket,
///   remove the pid file, return 0. On a TCP socket the kernel keeps queueing new connections
///   until the socket is closed: the workers answer them too, until the queue is empty; one that
///   arrives after the last worker found it empty is reset.
/// - SIGHUP: reload (`Supervisor+Reload`): the shell runs the configuration loading and writes the
///   new settings file; the supervisor starts a new generation, or keeps everything.
public final class Master {
    /// Re-runs the configuration loading (file, environment, flags) for SIGHUP: the server part and
    /// every setting (for the workers' snapshot).
    public typealias Reload = () throws -> (server: ServerConfiguration, values: ConfigValues)

    /// Every decision: which workers run, when to start, kill, hand over, stop (`Supervisor`).
    var supervisor: Supervisor
    public var configuration: ServerConfiguration { supervisor.configuration }
    var values: ConfigValues
    /// The sealed memfd with `values`, put on fd 3 of every worker of the current generation.
    var settingsFD: Int32 = -1
    let workerArguments: [String]
    let executablePath: String
    var logger: Logger
    let reload: Reload

    var socket: ListeningSocket?
    /// Where the master answers `/_kiln/health` itself (`server.status_listen`).
    var statusSocket: ListeningSocket?
    /// The lookup lane's socket (`server.lookup_workers`), nil without a lane.
    var lookupSocket: ListeningSocket?
    var scoreboard: Scoreboard?
    /// The file the workers share their origin limits through (`OriginGate`), on fd 5 of each.
    var sharedState: RecordLockFile?
    public static let sharedStateWorkerFD: Int32 = 5
    public static let sharedStateName = "kiln-shared-state"
    /// Connections closed for `server.allowed_peers` (main socket while overloaded, status socket).
    let mainRefusals = PeerRefusals(listener: "main")
    /// `server.allowed_peers` and `server.peer_secret` for what the master answers itself (the
    /// status socket, the overload 503s): the same checks as the workers'. Set at start and reload.
    var peerAccess = PeerAccess()
    let statusRefusals = PeerRefusals(listener: "status")
    /// Every worker's counters added up, and the master's own (`/_kiln/metrics`).
    let exporter = MetricsExporter()
    let startedAt = Master.now()
    var writtenPidFile: String?
    /// Reloads run so far and the last one's refusal (nil: it took), for `/_kiln/status` and
    /// `kiln reload`, which waits for `reloads` to move.
    var reloads = 0
    var lastReloadError: String?
    /// Set by the supervisor's `.exit`: the loop ends.
    var exitStatus: Int32?

    static let handledSignals: [Int32] = [SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT]

    /// - Parameters:
    ///   - configuration: the `[server]` part of `values`.
    ///   - workerLimits: the `[limits]` the master enforces (render deadline, slow log, recycling).
    ///   - values: every validated setting; workers read them from fd 3.
    ///   - workerArguments: the complete argv of a worker (`argv[0]`, `worker`, options).
    ///   - executablePath: what to spawn (`workerExecutable(named: "kiln-worker")` for `kiln serve`);
    ///     the default `/proc/self/exe` is this very binary even if the file was replaced on disk since.
    public init(configuration: ServerConfiguration, workerLimits: WorkerLimitsConfiguration, values: ConfigValues,
                workerArguments: [String], executablePath: String = "/proc/self/exe", logger: Logger,
                reload: @escaping Reload) {
        supervisor = Supervisor(configuration: configuration, limits: workerLimits)
        self.values = values
        self.workerArguments = workerArguments
        self.executablePath = executablePath
        self.logger = logger
        self.reload = reload
    }

    /// The PIDs of the running workers (all generations).
    public var workerPIDs: [pid_t] { supervisor.workers.keys.sorted() }

    /// Listens, starts the workers and supervises them until a stop signal. Throws only before any
    /// worker has started (socket or pid file); returns the exit status after a stop.
    public func run() throws -> Int32 {
        var set = Master.signalSet()
        // Block before anything else so no signal is delivered asynchronously; workers get an empty
        // mask from posix_spawn.
        guard pthread_sigmask(SIG_BLOCK, &set, nil) == 0 else {
            throw ServerStartError("cannot block signals: \(Errno.text(Errno.current))")
        }
        _ = kiln_ignore_signal(SIGPIPE)

        do {
            peerAccess = try PeerAccess(configuration)
        } catch {
            throw ServerStartError("\(error)")
        }
        let socket = try ListeningSocket.open(configuration)
        self.socket = socket
        defer { finish() }
        if let address = configuration.statusAddress {
            var status = configuration
            status.listen = address
            statusSocket = try ListeningSocket.open(status)
        }
        if let address = configuration.lookupAddress {
            var lane = configuration
            lane.listen = address
            lookupSocket = try ListeningSocket.open(lane)
        }
        scoreboard = try Scoreboard.create()
        let stateFD = kiln_shared_memfd(Master.sharedStateName, Master.sharedStateWorkerFD)
        sharedState = stateFD >= 0 ? RecordLockFile.adopt(fd: stateFD) : nil
        if stateFD < 0 { logger.warning("memfd_create: \(Errno.text(Errno.current)); origin limits are per worker") }
        settingsFD = try SettingsSnapshot.makeFile(values)
        try writePidFile(configuration.pidFile)

        let mode = configuration.listen.unixPath == nil ? "" : " mode 0\(String(configuration.socketMode, radix: 8))"
        logger.info("master \(getpid()) listening on \(configuration.listen)\(mode), backlog \(socket.backlog); starting \(configuration.workers) workers")
        logger.info("\(SigningSummary.line(values))")
        logger.info("\(CacheSummary.line(values))")
        if socket.backlog < configuration.backlog {
            logger.notice("server.backlog \(configuration.backlog) is more than the kernel allows (net.core.somaxconn = \(socket.backlog)): the listen queue holds \(socket.backlog); raise the sysctl for more")
        }
        if let statusSocket { logger.info("master answers /_kiln/health on \(statusSocket.address)") }
        if let lookupSocket {
            logger.info("lookup lane: \(configuration.lookupWorkers) worker\(configuration.lookupWorkers == 1 ? "" : "s") on \(lookupSocket.address) answer cache hits and hand misses to the render workers (nginx/kiln-lookup.conf)")
        }
        if let path = configuration.listen.unixPath, let access = SocketAccess(path: path) {
            logger.info("\(access.line)")
            if let warning = access.warning { logger.warning("\(warning)") }
        }
        feed(.start(boards: scoreboard?.slots ?? 1))
        // Start-up is over: the command line, the settings catalog and the checks need not stay
        // resident in a process that now mostly waits (its loop's code faults back in).
        ProcessMemory.releaseExecutablePages()

        while exitStatus == nil {
            // Signals stay blocked: they wait at most one poll (50 ms), then are taken here.
            pollSockets(milliseconds: 50)
            var info = siginfo_t()
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            while case let sig = sigtimedwait(&set, &info, &zero), sig > 0 { handle(signal: sig) }
            reap()
            watchScoreboard()
            sampleQueue()
            feed(.tick)
        }
        logger.info("master \(getpid()) stopped")
        return exitStatus ?? 0
    }

    // MARK: - events in, actions out

    /// Hands `event` to the supervisor and carries out what it says.
    func feed(_ event: SupervisorEvent) {
        perform(supervisor.handle(event, now: Master.now()))
    }

    /// Carries out `actions` in order. An action with an answer (a spawn, a reload, a wait) feeds
    /// it back at once, so what follows from it happens before the next action.
    func perform(_ actions: [SupervisorAction]) {
        for action in actions {
            switch action {
            case let .spawn(request):
                spawn(request)
            case let .kill(pid, sig):
                kill(pid, sig)
            case let .handOver(pid):
                _ = kiln_send_handover(pid)
            case let .log(level, message, metadata):
                logger.log(level: level, "\(message)", metadata: metadata.isEmpty ? nil : metadata)
            case .logWorkers:
                logger.info("\(supervisor.workersLine)")
            case .removeSocketFile:
                _ = lookupSocket?.removeSocketFile()
                if socket?.removeSocketFile() == true {
                    logger.info("removed the socket file: new connections are refused; workers answer the queued ones")
                }
            case .reload:
                reloadConfiguration()
            case let .replacePidFile(path):
                removePidFile()
                do { try writePidFile(path) } catch { logger.error("\(error)") }
            case let .awaitExit(pid):
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0 && Errno.current == EINTR {}
                feed(.exited(pid: pid, status: status))
            case let .collectMetrics(board):
                if let scoreboard { exporter.collect(scoreboard, slot: board) }
            case let .countRestarts(cause, count):
                exporter.restarted(cause, count: count)
            case let .countShed(count):
                exporter.shedConnections(count)
            case let .exit(status):
                exitStatus = status
            }
        }
    }

    // MARK: - signals

    static func signalSet() -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for s in handledSignals { sigaddset(&set, s) }
        return set
    }

    func handle(signal sig: Int32) {
        switch sig {
        case SIGTERM, SIGINT, SIGQUIT: feed(.stop(signal: sig))
        case SIGHUP: feed(.hangUp)
        default: break  // SIGCHLD: `reap` follows
        }
    }

    /// Runs the configuration loading again and tells the supervisor how it went.
    func reloadConfiguration() {
        let outcome: ReloadOutcome
        do {
            let loaded = try reload()
            // The master's own answers take the new peer guards with the new generation.
            let access = try PeerAccess(loaded.server)
            let newFD = try SettingsSnapshot.makeFile(loaded.values)
            let limits: WorkerLimitsConfiguration
            do {
                limits = try WorkerLimitsConfiguration(loaded.values)
            } catch {
                close(newFD)
                throw error
            }
            values = loaded.values
            peerAccess = access
            close(settingsFD)
            settingsFD = newFD
            outcome = .loaded(loaded.server, limits)
            logger.info("reloaded: \(SigningSummary.line(values))")
            logger.info("reloaded: \(CacheSummary.line(values))")
        } catch {
            outcome = .failed("\(error)")
        }
        reloads += 1
        if case let .failed(reason) = outcome { lastReloadError = reason } else { lastReloadError = nil }
        feed(.reloaded(outcome))
    }

    // MARK: - observations

    func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid < 0 && Errno.current == EINTR { continue }
            if pid <= 0 { return }
            feed(.exited(pid: pid, status: status))
        }
    }

    /// The running workers' scoreboard slots, for the deadlines and the slow log.
    func watchScoreboard() {
        guard let scoreboard, supervisor.watchesRequests else { return }
        var slots: [pid_t: Scoreboard.Slot] = [:]
        for w in supervisor.workers.values where !w.killed {
            if let slot = scoreboard.read(w.board) { slots[w.pid] = slot }
        }
        feed(.scoreboard(slots))
    }

    static func now() -> Double {
        MonotonicClock.seconds()
    }
}

/// The server could not start (nothing is running yet).
public struct ServerStartError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
