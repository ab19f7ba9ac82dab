import KilnFastCGI
import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPOSIX
import KilnCodecs
import KilnModel
import KilnTracing
import Logging

/// Builds the request handler of a worker from its validated settings (built once per process).
/// The real one renders images (`ImageHandler`); it is plugged in by the executable.
public typealias RequestHandlerFactory = (KilnConfiguration, Logger) throws -> any RequestHandling

/// One worker process: started by the master with the listening socket on fd 0, serves requests one
/// at a time until told to stop, then exits.
///
/// Stop: SIGTERM, SIGINT or SIGQUIT (also sent by the kernel when the master dies, through
/// PR_SET_PDEATHSIG) sets a flag and takes the listening socket away from fd 0, so a worker waiting
/// in accept returns at once, and a worker in a request finishes it first. Then the worker answers
/// the connections still queued on the socket (through the copy `kiln_drain_fd` kept at start)
/// until the queue is empty or `shutdown_timeout` has passed since the signal, and exits. The
/// master's reload signal is a hand-over (`kiln_send_handover`): the new generation takes the
/// queue, the old worker exits after its request. See `kiln_server.h`.
public struct Worker {
    /// Every setting, validated once (from the master's snapshot).
    public var settings: KilnConfiguration
    public var configuration: ServerConfiguration { settings.server }
    /// The master's PID (`--master-pid`): the worker asks for SIGTERM when its parent dies and exits
    /// at once if the parent is already another process. nil when started by hand (spawn-fcgi).
    public var masterPID: pid_t?
    /// This worker's slot in the master's scoreboard (`--scoreboard-slot`, the scoreboard on fd 4);
    /// nil when started by hand.
    public var scoreboardSlot: Int?
    /// `limits.max_worker_memory`: exit after a request that left the RSS above it (0: never).
    public var maxWorkerMemory = 0
    public var logger: Logger

    /// Exit statuses.
    public enum ExitStatus {
        public static let ok: Int32 = 0
        public static let failure: Int32 = 1
        /// The settings were rejected (the same status the command line uses).
        public static let configuration: Int32 = 2
    }

    public init(settings: KilnConfiguration, masterPID: pid_t?, scoreboardSlot: Int? = nil, logger: Logger) {
        self.settings = settings
        self.masterPID = masterPID
        self.scoreboardSlot = scoreboardSlot
        self.logger = logger
        maxWorkerMemory = settings.workerLimits.maxWorkerMemory
    }

    /// Installs the stop handler. Call it first thing in a worker process (before loading settings),
    /// so a stop signal that arrives during start-up is not fatal; `run` calls it again.
    @discardableResult
    public static func installStopHandler() -> Bool {
        kiln_install_stop_handler() == 0
    }

    /// Runs until stopped; returns the process exit status.
    public func run(makeHandler: RequestHandlerFactory) -> Int32 {
        guard Worker.installStopHandler() else {
            logger.error("cannot install the stop handler: \(Errno.text(Errno.current))")
            return ExitStatus.failure
        }
        // nginx may close a connection before the answer is written: a write error, not a signal.
        _ = kiln_ignore_signal(SIGPIPE)
        // Reloading is the master's business; a HUP sent to the whole process group is not ours.
        _ = kiln_ignore_signal(SIGHUP)

        if let masterPID {
            _ = kiln_set_parent_death_signal(SIGTERM)
            // The master may have died before the call above: then nobody would ever tell us.
            guard getppid() == masterPID else {
                logger.notice("master \(masterPID) is gone; exiting")
                return ExitStatus.ok
            }
        }
        // A stop signal during start-up has already taken the socket away from fd 0.
        if kiln_stop_requested() != 0 { return ExitStatus.ok }
        guard kiln_is_listening_socket(0) == 1 else {
            if kiln_stop_requested() != 0 { return ExitStatus.ok }
            logger.error("fd 0 is not a listening socket: workers are started by `kiln serve`")
            return ExitStatus.failure
        }

        // Without libmagic's database every request would be a 415 (and negatively cached):
        // refuse to start instead; the master's crash-loop guard paces the restarts.
        do {
            try MagicSniffer.checkDatabase()
        } catch {
            logger.critical("\(error); the worker does not start")
            return ExitStatus.failure
        }

        let handler: any RequestHandling
        do {
            handler = try makeHandler(settings, logger)
        } catch let error as ConfigError {
            logger.error("invalid configuration: \(error)")
            return ExitStatus.configuration
        } catch {
            logger.error("cannot create the request handler: \(error)")
            return ExitStatus.failure
        }

        // Never serve without the secret the configuration asks for (its file may have gone).
        let peerAccess: PeerAccess
        do {
            peerAccess = try PeerAccess(configuration)
        } catch {
            logger.error("invalid configuration: \(error)")
            return ExitStatus.configuration
        }

        let responder = FastCGIResponder(listenFD: 0, requestReadTimeout: configuration.requestReadTimeout,
                                         keepaliveTimeout: configuration.keepaliveTimeout, logger: logger)
        var scoreboard: Scoreboard?
        if let slot = scoreboardSlot {
            scoreboard = Scoreboard.attach()
            if scoreboard == nil || slot >= scoreboard!.slots {
                logger.warning("no scoreboard on fd \(Scoreboard.workerFD) for slot \(slot): the master cannot see this worker's requests")
                scoreboard = nil
            }
        }
        let metrics = configuration.metrics
            ? scoreboard.map { WorkerMetrics(factory: ScoreboardMetricsFactory(board: $0, slot: scoreboardSlot ?? 0)) } : nil
        let monitor = RequestMonitor(scoreboard: scoreboard, slot: scoreboardSlot ?? -1, metrics: metrics)
        responder.monitor = monitor
        responder.peerAccess = peerAccess
        responder.redaction = settings.security.urlSignature
        handler.observe(with: monitor)
        let exporter = Worker.startTracing(settings.tracing, slot: scoreboardSlot, metrics: metrics, logger: logger)
        defer { exporter?.shutdown(timeout: min(settings.tracing.exportTimeout, Worker.traceFlushLimit)) }
        if let exporter {
            responder.tracer = RequestTracer(exporter: exporter, sampler: settings.tracing.sampler, workerSlot: scoreboardSlot)
        }
        logger.debug("worker ready")
        var recycle: Int?
        let policy = RecyclePolicy(maxRequests: configuration.maxRequests, maxMemory: maxWorkerMemory)
        let outcome = responder.serve(handler: handler, maxRequests: policy.maxRequests) {
            if kiln_stop_requested() != 0 { return true }
            if policy.checksMemory(afterRequests: responder.requestCount), let rss = ProcessMemory.residentBytes(),
               policy.isOverMemory(residentBytes: rss) {
                recycle = rss
                return true
            }
            return false
        }
        handler.finish()
        if let rss = recycle, kiln_stop_requested() == 0 {
            logger.notice("\(policy.memoryNotice(residentBytes: rss, requests: responder.requestCount))")
            return ExitStatus.ok
        }
        switch outcome {
        case .stopRequested:
            drainQueue(responder, handler: handler)
            logger.debug("stopping after \(responder.requestCount) requests (signal \(kiln_stop_signal()))")
        case .listenerClosed:
            logger.debug("listening socket closed; stopping after \(responder.requestCount) requests")
        case .maxRequestsReached:
            logger.info("\(policy.countNotice)")
        case let .acceptFailed(e):
            logger.error("accept failed: \(Errno.text(e)); exiting")
            return ExitStatus.failure
        }
        return ExitStatus.ok
    }

    /// The most a stopping worker waits for its last traces to be sent.
    static let traceFlushLimit = 2.0

    /// The trace exporter of `tracing` (nil: off), counting into `metrics`.
    static func startTracing(_ tracing: TracingConfiguration, slot: Int?, metrics: WorkerMetrics?, logger: Logger) -> SpanExporter? {
        SpanExporter.start(tracing, resource: RequestTracer.resource(serviceName: tracing.serviceName), logger: logger) { change in
            metrics?.traceSpans(exported: change.exported, dropped: change.dropped, failed: change.failed)
        }
    }

    /// After a stop signal: answers the connections already queued on the listening socket, unless
    /// the signal was the master's hand-over to a new generation (reload), which takes them.
    /// Bounded by `shutdown_timeout` from the signal (the master kills at the same bound).
    func drainQueue(_ responder: FastCGIResponder, handler: some RequestHandling) {
        let fd = kiln_drain_fd()
        guard fd >= 0, kiln_stop_is_handover() == 0 else { return }
        let since = kiln_stop_time()
        let deadline = (since > 0 ? since : MonotonicClock.seconds()) + configuration.shutdownTimeout
        let drained = responder.drain(fd: fd, handler: handler, deadline: deadline)
        if drained > 0 {
            logger.info("answered \(drained) queued connections after the stop signal")
        }
        if MonotonicClock.seconds() >= deadline {
            logger.warning("stopped draining the queue at shutdown_timeout (\(configuration.shutdownTimeout) s); connections still queued are not answered")
        }
    }
}
