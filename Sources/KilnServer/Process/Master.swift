import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPOSIX
import KilnModel
import Logging

/// The supervising process: owns the listening socket, starts `workers` worker processes and keeps
/// that many running.
///
/// Workers are started with `posix_spawn` of the worker executable (`kiln serve` gives the
/// `kiln-worker` next to its own executable, `workerExecutable`; never `fork`), the listening socket on fd 0, the validated settings on fd 3 (`SettingsSnapshot`, so a replacement
/// worker never picks up an edited file before SIGHUP), an empty signal mask and default signal
/// actions. The master is
/// single-threaded and handles signals synchronously (blocked, then `sigtimedwait` every 200 ms):
///
/// - SIGCHLD: reap; a worker of the current generation that exits is replaced at once. More than
///   10 crashes (a non-zero status or a fatal signal) within 10 s is a crash loop: then at most one
///   worker is started per second, and an error is logged, until 10 s pass without a crash.
/// - SIGTERM, SIGINT, SIGQUIT: stop, losing nothing queued. Remove the unix socket file first (a
///   new connect fails at once: nginx answers 502 without waiting), SIGTERM all workers: each
///   finishes its request, then answers the connections still queued on the socket until the queue
///   is empty, and exits. The socket stays open until every worker is gone (closing it would reset
///   the queued connections). After `shutdown_timeout` SIGKILL the rest; then close the socket,
///   remove the pid file, return 0. A second stop signal kills at once. On a TCP socket the kernel
///   keeps queueing new connections until the socket is closed: the workers answer them too, until
///   the queue is empty; one that arrives after the last worker found it empty is reset.
/// - SIGHUP: reload. Run the configuration loading again; if it fails, log and keep everything.
///   Otherwise start a new generation of workers and send the old one a hand-over SIGTERM
///   (`kiln_send_handover`): each finishes its request and exits, leaving the queue to the new
///   generation (SIGKILL after `shutdown_timeout`). The listening socket is kept: changes of
///   `listen`, `backlog` and the socket's mode and owner need a restart.
public final class Master {
    /// Re-runs the configuration loading (file, environment, flags) for SIGHUP: the server part and
    /// every setting (for the workers' snapshot).
    public typealias Reload = () throws -> (server: ServerConfiguration, values: ConfigValues)

    struct WorkerProcess {
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

    public private(set) var configuration: ServerConfiguration
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
    var scoreboard: Scoreboard?
    /// The file the workers share their origin limits through (`OriginGate`), on fd 5 of each.
    var sharedState: RecordLockFile?
    public static let sharedStateWorkerFD: Int32 = 5
    public static let sharedStateName = "kiln-shared-state"
    /// `limits.render_timeout`, `limits.slow_log_after` (the master enforces them).
    var workerLimits: WorkerLimitsConfiguration
    /// Since when the main socket's listen queue has held connections (monotonic seconds, sampled).
    var queueBusySince: Double?
    /// How long queued connections have waited, when the kernel tells the queue's length.
    var queueWaits = QueueWaitTracker()
    /// Whether the last sample of the queue's length worked (else `queueBusySince` decides).
    var queueLengthKnown = false
    /// Connections the master answered with 503 itself, and when it last logged about it.
    var overloadAnswers = 0
    var overloadLogged = 0.0
    /// Connections closed for `server.allowed_peers` (main socket while overloaded, status socket).
    let mainRefusals = PeerRefusals(listener: "main")
    let statusRefusals = PeerRefusals(listener: "status")
    /// Every worker's counters added up, and the master's own (`/_kiln/metrics`).
    let exporter = MetricsExporter()
    let startedAt = Master.now()
    var workers: [pid_t: WorkerProcess] = [:]
    var generation = 1
    /// Slots of the current generation waiting for a worker, with the earliest start time.
    var pendingSlots: [Int: Double] = [:]
    var crashTimes: [Double] = []
    var inCrashLoop = false
    var lastSpawn: Double = -.infinity
    var stopDeadline: Double?
    var writtenPidFile: String?

    static let handledSignals: [Int32] = [SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT]
    static let crashWindow = 10.0
    static let crashLimit = 10

    /// - Parameters:
    ///   - configuration: the `[server]` part of `values`.
    ///   - values: every validated setting; workers read them from fd 3.
    ///   - workerArguments: the complete argv of a worker (`argv[0]`, `worker`, options).
    ///   - executablePath: what to spawn (`workerExecutable(named: "kiln-worker")` for `kiln serve`);
    ///     the default `/proc/self/exe` is this very binary even if the file was replaced on disk since.
    public init(configuration: ServerConfiguration, values: ConfigValues, workerArguments: [String],
                executablePath: String = "/proc/self/exe", logger: Logger, reload: @escaping Reload) {
        self.configuration = configuration
        self.values = values
        self.workerArguments = workerArguments
        self.executablePath = executablePath
        self.logger = logger
        self.reload = reload
        workerLimits = (try? WorkerLimitsConfiguration(values)) ?? WorkerLimitsConfiguration()
    }

    /// The executable `name` in the folder of this process's own executable (the real path of
    /// `/proc/self/exe`): how `kiln serve` finds `kiln-worker`. Throws when it is missing or not
    /// executable: `kiln` and `kiln-worker` are installed together.
    public static func workerExecutable(named name: String) throws -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { throw ServerStartError("readlink /proc/self/exe: \(Errno.text(errno))") }
        let me = String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let folder = me.lastIndex(of: "/").map { String(me[..<$0]) } ?? "."
        let path = (folder.isEmpty ? "" : folder) + "/" + name
        guard access(path, X_OK) == 0 else {
            throw ServerStartError("the worker executable \(path) is missing or not executable (\(Errno.text(errno))): "
                + "install \(name) next to \(me) (both are built by `swift build -c release`)")
        }
        return path
    }

    /// The PIDs of the running workers (all generations).
    public var workerPIDs: [pid_t] { workers.keys.sorted() }

    /// Listens, starts the workers and supervises them until a stop signal. Throws only before any
    /// worker has started (socket or pid file); returns the exit status after a stop.
    public func run() throws -> Int32 {
        var set = Master.signalSet()
        // Block before anything else so no signal is delivered asynchronously; workers get an empty
        // mask from posix_spawn.
        guard pthread_sigmask(SIG_BLOCK, &set, nil) == 0 else {
            throw ServerStartError("cannot block signals: \(Errno.text(errno))")
        }
        _ = kiln_ignore_signal(SIGPIPE)

        let socket = try ListeningSocket.open(configuration)
        self.socket = socket
        defer { finish() }
        if let address = configuration.statusAddress {
            var status = configuration
            status.listen = address
            statusSocket = try ListeningSocket.open(status)
        }
        scoreboard = try Scoreboard.create()
        let stateFD = kiln_shared_memfd(Master.sharedStateName, Master.sharedStateWorkerFD)
        sharedState = stateFD >= 0 ? RecordLockFile.adopt(fd: stateFD) : nil
        if stateFD < 0 { logger.warning("memfd_create: \(Errno.text(errno)); origin limits are per worker") }
        settingsFD = try SettingsSnapshot.makeFile(values)
        try writePidFile(configuration.pidFile)

        let mode = configuration.listen.unixPath == nil ? "" : " mode 0\(String(configuration.socketMode, radix: 8))"
        logger.info("master \(getpid()) listening on \(configuration.listen)\(mode), backlog \(configuration.backlog); starting \(configuration.workers) workers")
        if let statusSocket { logger.info("master answers /_kiln/health on \(statusSocket.address)") }
        for slot in 0..<configuration.workers { spawnOrDefer(slot) }
        logWorkers()

        while true {
            // Signals stay blocked: they wait at most one poll (50 ms), then are taken here.
            pollSockets(milliseconds: 50)
            var info = siginfo_t()
            var zero = timespec(tv_sec: 0, tv_nsec: 0)
            while case let sig = sigtimedwait(&set, &info, &zero), sig > 0 { handle(signal: sig) }
            reap()
            watchScoreboard()
            sampleQueue()
            if let deadline = stopDeadline {
                if workers.isEmpty { break }
                if Master.now() >= deadline {
                    killStragglers()
                    break
                }
            } else {
                startPendingWorkers()
                killOverdueDrainingWorkers()
            }
        }
        logger.info("master \(getpid()) stopped")
        return 0
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
        case SIGCHLD:
            break
        case SIGTERM, SIGINT, SIGQUIT:
            if stopDeadline == nil {
                beginStop(sig)
            } else {
                logger.warning("received \(Master.signalName(sig)) again: killing \(workers.count) workers now")
                stopDeadline = Master.now()
            }
        case SIGHUP:
            if stopDeadline == nil { reloadConfiguration() }
        default:
            break
        }
    }

    func beginStop(_ sig: Int32) {
        logger.notice("received \(Master.signalName(sig)): stopping \(workers.count) workers (shutdown_timeout \(configuration.shutdownTimeout) s)")
        stopDeadline = Master.now() + configuration.shutdownTimeout
        pendingSlots.removeAll()
        // No shutdown() and no close(): either would reset the connections still queued.
        if socket?.removeSocketFile() == true {
            logger.info("removed the socket file: new connections are refused; workers answer the queued ones")
        }
        for pid in workers.keys { kill(pid, SIGTERM) }
    }

    func killStragglers() {
        for (pid, w) in workers {
            logger.warning("worker \(pid) (generation \(w.generation)) still running after shutdown_timeout; sending SIGKILL")
            kill(pid, SIGKILL)
        }
        for pid in Array(workers.keys) {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
            exited(pid, status: status)
        }
    }

    // MARK: - reload

    func reloadConfiguration() {
        logger.notice("received SIGHUP: reloading the configuration")
        var new: ServerConfiguration
        let newFD: Int32
        do {
            let loaded = try reload()
            new = loaded.server
            newFD = try SettingsSnapshot.makeFile(loaded.values)
            workerLimits = try WorkerLimitsConfiguration(loaded.values)
            values = loaded.values
        } catch {
            logger.error("reload failed, keeping the running workers: \(error)")
            return
        }
        close(settingsFD)
        settingsFD = newFD
        let old = configuration
        if new.statusListen != old.statusListen {
            logger.warning("status_listen changes only on restart")
            new.statusListen = old.statusListen
        }
        if new.listen != old.listen || new.backlog != old.backlog || new.socketMode != old.socketMode
            || new.socketOwner != old.socketOwner || new.socketGroup != old.socketGroup {
            logger.warning("listen, backlog, socket_mode, socket_owner and socket_group change only on restart; still listening on \(old.listen)")
            new.listen = old.listen
            new.backlog = old.backlog
            new.socketMode = old.socketMode
            new.socketOwner = old.socketOwner
            new.socketGroup = old.socketGroup
        }
        if new.pidFile != old.pidFile {
            removePidFile()
            do { try writePidFile(new.pidFile) } catch { logger.error("\(error)") }
        }
        configuration = new

        let draining = Array(workers.keys)
        exporter.restarted(.reload, count: draining.count)
        generation += 1
        pendingSlots.removeAll()
        crashTimes.removeAll()
        inCrashLoop = false
        for slot in 0..<new.workers { spawnOrDefer(slot) }
        let deadline = Master.now() + new.shutdownTimeout
        for pid in draining {
            workers[pid]?.deadline = deadline
            // The new generation takes the queued connections: the old one does not drain them.
            _ = kiln_send_handover(pid)
        }
        logger.notice("generation \(generation) started; \(draining.count) workers of the previous generation finish their requests and exit")
        logWorkers()
    }

    func killOverdueDrainingWorkers() {
        let now = Master.now()
        for (pid, w) in workers where !w.killed {
            if let d = w.deadline, now >= d {
                logger.warning("worker \(pid) (generation \(w.generation)) still running shutdown_timeout after SIGTERM; sending SIGKILL")
                kill(pid, SIGKILL)
                workers[pid]?.killed = true
            }
        }
    }

    // MARK: - children

    func reap() {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, WNOHANG)
            if pid < 0 && errno == EINTR { continue }
            if pid <= 0 { return }
            exited(pid, status: status)
        }
    }

    func exited(_ pid: pid_t, status: Int32) {
        guard let w = workers.removeValue(forKey: pid) else {
            logger.debug("reaped unknown child \(pid): \(Master.describe(status: status))")
            return
        }
        // Its last counts, before the slot goes to another worker.
        if let scoreboard { exporter.collect(scoreboard, slot: w.board) }
        let lived = Master.now() - w.started
        let how = Master.describe(status: status)
        let replace = stopDeadline == nil && w.generation == generation && w.deadline == nil
        guard replace else {
            logger.info("worker \(pid) (generation \(w.generation)) \(how)")
            return
        }
        if w.killedAtDeadline {
            exporter.restarted(.deadline)
            logger.info("worker \(pid) (slot \(w.slot)) killed at limits.render_timeout; replacing it")
        } else if Master.isCrash(status) {
            exporter.restarted(.crash)
            let hint = kiln_wifexited(status) != 0 && kiln_wexitstatus(status) == Worker.ExitStatus.configuration
                ? " (it rejected the configuration; fix it and send SIGHUP)" : ""
            logger.error("worker \(pid) (slot \(w.slot)) \(how) after \(Master.format(lived)) s\(hint); replacing it")
            recordCrash()
        } else {
            exporter.restarted(.recycle)
            logger.info("worker \(pid) (slot \(w.slot)) \(how) after \(Master.format(lived)) s; replacing it")
        }
        if w.slot < configuration.workers { pendingSlots[w.slot] = Master.now() }
    }

    /// A non-zero exit status or a fatal signal. A clean exit (recycling) and death by a stop signal
    /// (SIGTERM, SIGINT, SIGQUIT, SIGHUP: someone stopped it before its handler was installed) are not.
    static func isCrash(_ status: Int32) -> Bool {
        if kiln_wifexited(status) != 0 { return kiln_wexitstatus(status) != 0 }
        if kiln_wifsignaled(status) != 0 { return ![SIGTERM, SIGINT, SIGQUIT, SIGHUP].contains(kiln_wtermsig(status)) }
        return true
    }

    func recordCrash() {
        let now = Master.now()
        crashTimes.append(now)
        crashTimes.removeAll { now - $0 > Master.crashWindow }
        if crashTimes.count > Master.crashLimit && !inCrashLoop {
            inCrashLoop = true
            logger.error("crash loop: \(crashTimes.count) workers failed within \(Int(Master.crashWindow)) s; starting at most one worker per second")
        }
    }

    func startPendingWorkers() {
        guard !pendingSlots.isEmpty else { return }
        let now = Master.now()
        if inCrashLoop {
            // Leave the crash loop only after a whole window without a crash.
            crashTimes.removeAll { now - $0 > Master.crashWindow }
            if crashTimes.isEmpty {
                inCrashLoop = false
                logger.notice("crash loop over; replacing workers at once again")
            }
        }
        for slot in pendingSlots.keys.sorted() {
            guard let notBefore = pendingSlots[slot], now >= notBefore else { continue }
            if inCrashLoop && now - lastSpawn < 1.0 { return }
            pendingSlots[slot] = nil
            spawnOrDefer(slot)
            if inCrashLoop { return }
        }
    }

    /// Starts a worker for `slot` of the current generation, or retries in a second.
    func spawnOrDefer(_ slot: Int) {
        do {
            let board = freeBoardSlot()
            scoreboard?.reset(board, pid: 0)
            exporter.forget(slot: board)
            let pid = try spawnWorker(board: board)
            let now = Master.now()
            lastSpawn = now
            workers[pid] = WorkerProcess(pid: pid, slot: slot, generation: generation, started: now, board: board)
            logger.info("started worker \(pid) (slot \(slot), generation \(generation))")
        } catch {
            logger.error("cannot start a worker: \(error); retrying in 1 s")
            pendingSlots[slot] = Master.now() + 1
        }
    }

    /// The lowest scoreboard slot no running worker uses.
    func freeBoardSlot() -> Int {
        let used = Set(workers.values.map(\.board))
        return (0..<(scoreboard?.slots ?? 1)).first { !used.contains($0) } ?? 0
    }

    /// posix_spawn with the listening socket on fd 0, the settings on fd 3, the scoreboard on fd 4,
    /// the shared state on fd 5, an empty signal mask and default actions.
    func spawnWorker(board: Int) throws -> pid_t {
        guard let socket else { throw ServerStartError("no listening socket") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var rc = posix_spawn_file_actions_adddup2(&actions, socket.fd, 0)
        if rc == 0 { rc = posix_spawn_file_actions_adddup2(&actions, settingsFD, SettingsSnapshot.workerFD) }
        if rc == 0, let scoreboard { rc = posix_spawn_file_actions_adddup2(&actions, scoreboard.fd, Scoreboard.workerFD) }
        if rc == 0, let sharedState {
            rc = posix_spawn_file_actions_adddup2(&actions, sharedState.fd, Master.sharedStateWorkerFD)
        }
        // Nothing else the master inherited (a supervisor's pipes, say) leaks into workers.
        if rc == 0 { rc = kiln_spawn_closefrom(&actions, sharedState == nil ? Scoreboard.workerFD + 1 : Master.sharedStateWorkerFD + 1) }
        guard rc == 0 else { throw ServerStartError("posix_spawn_file_actions_adddup2: \(Errno.text(rc))") }

        var attr = posix_spawnattr_t()
        posix_spawnattr_init(&attr)
        defer { posix_spawnattr_destroy(&attr) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attr, &empty)
        posix_spawnattr_setsigdefault(&attr, &all)
        posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = workerArguments + (scoreboard == nil ? [] : ["--scoreboard-slot", String(board)])
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        rc = posix_spawn(&pid, executablePath, &actions, &attr, argv, kiln_environ())
        guard rc == 0 else { throw ServerStartError("posix_spawn \(executablePath): \(Errno.text(rc))") }
        return pid
    }

    func logWorkers() {
        let current = workers.values.filter { $0.generation == generation }.sorted { $0.slot < $1.slot }
        logger.info("workers of generation \(generation): \(current.map { String($0.pid) }.joined(separator: " "))")
    }

    // MARK: - files

    /// Writes the pid beside `path` and renames it over `path`. A symlink at `path` is refused
    /// (like nginx and php-fpm): a pid file written as root must never go where a link points.
    func writePidFile(_ path: String) throws {
        guard !path.isEmpty else { return }
        guard !Files.isSymbolicLink(path) else {
            throw ServerStartError("server.pid_file \(path) is a symbolic link: refusing to write through it")
        }
        do {
            try Files.writeAtomically(Array("\(getpid())\n".utf8), to: path)
        } catch {
            throw ServerStartError("cannot write server.pid_file \(path): \(Errno.text(error.code))")
        }
        writtenPidFile = path
    }

    func removePidFile() {
        if let path = writtenPidFile { unlink(path) }
        writtenPidFile = nil
    }

    func finish() {
        socket?.close()
        socket = nil
        statusSocket?.close()
        statusSocket = nil
        if settingsFD >= 0 { close(settingsFD) }
        settingsFD = -1
        removePidFile()
    }

    // MARK: - helpers

    static func now() -> Double {
        MonotonicClock.seconds()
    }

    static func format(_ seconds: Double) -> String {
        let tenths = Int((seconds * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    static func describe(status: Int32) -> String {
        if kiln_wifexited(status) != 0 { return "exited with status \(kiln_wexitstatus(status))" }
        if kiln_wifsignaled(status) != 0 {
            let sig = kiln_wtermsig(status)
            return "was killed by \(signalName(sig))" + (kiln_wcoredump(status) != 0 ? " (core dumped)" : "")
        }
        return "changed state (\(status))"
    }

    static func signalName(_ sig: Int32) -> String {
        switch sig {
        case SIGHUP: "SIGHUP"
        case SIGINT: "SIGINT"
        case SIGQUIT: "SIGQUIT"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGSEGV: "SIGSEGV"
        case SIGPIPE: "SIGPIPE"
        case SIGTERM: "SIGTERM"
        case SIGCHLD: "SIGCHLD"
        default: "signal \(sig)"
        }
    }
}

/// The server could not start (nothing is running yet).
public struct ServerStartError: Error, Sendable, CustomStringConvertible {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
