import KilnModel
import KilnOrigins
import KilnPOSIX
import Logging
import Synchronization

/// Where a worker's finished traces go (`SpanExporter`; a test may keep them).
public protocol SpanExporting: AnyObject, Sendable {
    /// Hands over one trace's spans without waiting for anything; false when they were dropped.
    @discardableResult
    func submit(_ spans: [SpanRecord]) -> Bool
    /// Sends what is queued and stops, within `timeout` seconds (the rest is dropped).
    func shutdown(timeout: Double)
}

/// A worker's OTLP/HTTP exporter: a bounded queue the request thread appends to under a lock
/// (never more), and one thread of its own that posts batches to `tracing.endpoint` every
/// `tracing.export_interval` (sooner when half the queue is full). A collector that is slow, down
/// or hanging costs requests nothing: the queue fills and whole traces beyond
/// `tracing.queue_size` are dropped, counted, and logged at most once a minute.
public final class SpanExporter: SpanExporting {
    /// Spans by fate, since the start (`kiln_trace_spans_total{result}`).
    public struct Counts: Sendable, Equatable {
        public var exported = 0
        public var dropped = 0
        public var failed = 0
        public init() {}
    }

    /// One POST: the body, the answer's status or the failure's reason.
    public typealias Post = @Sendable (_ body: [UInt8]) -> Result<Int, PostFailure>
    public struct PostFailure: Error, Sendable, Equatable {
        public var reason: String
    }

    /// Spans per POST.
    static let batchLimit = 512

    private struct State {
        var queue: [SpanRecord] = []
        var stopping = false
        var running = false
        var counts = Counts()
        var lastWarning: Double = -.infinity
    }

    private let state = Mutex(State())
    private let wakeup: ThreadWakeup
    private let capacity: Int
    private let interval: Double
    private let resource: TraceFacts
    private let post: Post
    private let report: @Sendable (Counts) -> Void
    private let logger: Logger

    /// - Parameters:
    ///   - post: sends one request body (`SpanExporter.httpPost` for the real collector).
    ///   - report: told the spans exported, dropped and failed by each change (metrics).
    public init?(capacity: Int, interval: Double, resource: TraceFacts, logger: Logger,
                 post: @escaping Post, report: @escaping @Sendable (Counts) -> Void = { _ in }) {
        guard let wakeup = ThreadWakeup() else { return nil }
        self.wakeup = wakeup
        self.capacity = max(1, capacity)
        self.interval = interval
        self.resource = resource
        self.post = post
        self.report = report
        self.logger = logger
    }

    /// The exporter `configuration` describes, with its thread running; nil when tracing is off
    /// or no thread could be started (logged).
    public static func start(_ configuration: TracingConfiguration, resource: TraceFacts, logger: Logger,
                             report: @escaping @Sendable (Counts) -> Void = { _ in }) -> SpanExporter? {
        guard configuration.isEnabled else { return nil }
        guard let exporter = SpanExporter(capacity: configuration.queueSize, interval: configuration.exportInterval,
                                          resource: resource, logger: logger, post: httpPost(configuration), report: report),
              exporter.startThread() else {
            logger.error("cannot start the trace exporter's thread: no traces from this worker")
            return nil
        }
        return exporter
    }

    /// POSTs to the collector as OTLP/HTTP asks (`application/x-protobuf`), with the configured
    /// headers, no redirects, within `tracing.export_timeout`. Any address is allowed: the
    /// endpoint is the operator's, not a request's.
    public static func httpPost(_ configuration: TracingConfiguration) -> Post {
        let fetcher = HTTPFetcher(connectTimeout: configuration.exportTimeout, timeout: configuration.exportTimeout,
                                  maxRedirects: 0, maxBytes: 64 << 10)
        let url = configuration.endpoint
        let headers = [(name: "Content-Type", value: "application/x-protobuf")]
            + configuration.headerPairs.map { (name: $0.0, value: $0.1) }
        return { body in
            do {
                return .success(try fetcher.send("POST", url, headers: headers, body: body, checkAddress: { _ in nil }).status)
            } catch {
                return .failure(PostFailure(reason: "\(error)"))
            }
        }
    }

    /// What happened to the spans so far.
    public var counts: Counts { state.withLock { $0.counts } }

    @discardableResult
    public func submit(_ spans: [SpanRecord]) -> Bool {
        guard !spans.isEmpty else { return true }
        let (accepted, wake) = state.withLock { s -> (Bool, Bool) in
            guard !s.stopping, s.queue.count + spans.count <= capacity else {
                s.counts.dropped += spans.count
                return (false, false)
            }
            s.queue += spans
            return (true, s.queue.count * 2 >= capacity)
        }
        if !accepted {
            var dropped = Counts()
            dropped.dropped = spans.count
            report(dropped)
            warnOnce("the trace queue is full (tracing.queue_size \(capacity)): dropping traces until the collector takes them")
        }
        if wake { wakeup.wake() }
        return accepted
    }

    public func shutdown(timeout: Double) {
        let running = state.withLock { s -> Bool in
            s.stopping = true
            return s.running
        }
        guard running else { return }
        wakeup.wake()
        let deadline = MonotonicClock.seconds() + max(0, timeout)
        while state.withLock({ $0.running }) && MonotonicClock.seconds() < deadline {
            Sleep.milliseconds(5)
        }
    }

    func startThread() -> Bool {
        state.withLock { $0.running = true }
        let started = KilnThread.start { [self] in
            run()
            state.withLock { $0.running = false }
        }
        if !started { state.withLock { $0.running = false } }
        return started
    }

    /// The thread: wait, send everything queued in batches, until stopped (then one last round).
    private func run() {
        while true {
            wakeup.wait(timeout: interval)
            let stopping = state.withLock { $0.stopping }
            while let batch = takeBatch() { send(batch) }
            if stopping { return }
        }
    }

    private func takeBatch() -> [SpanRecord]? {
        state.withLock { s in
            guard !s.queue.isEmpty else { return nil }
            let n = min(SpanExporter.batchLimit, s.queue.count)
            defer { s.queue.removeFirst(n) }
            return Array(s.queue.prefix(n))
        }
    }

    private func send(_ batch: [SpanRecord]) {
        let body = OTLPTraceEncoder.encode(resource: resource, spans: batch)
        var change = Counts()
        switch post(body) {
        case .success(let status) where (200..<300).contains(status):
            change.exported = batch.count
        case .success(let status):
            change.failed = batch.count
            warnOnce("the trace collector answered \(status): \(batch.count) spans dropped")
        case .failure(let failure):
            change.failed = batch.count
            warnOnce("cannot send traces to the collector: \(failure.reason); \(batch.count) spans dropped")
        }
        state.withLock {
            $0.counts.exported += change.exported
            $0.counts.failed += change.failed
        }
        report(change)
    }

    /// Logs `message` at `warning` unless one was logged in the last minute.
    private func warnOnce(_ message: String) {
        let now = MonotonicClock.seconds()
        let due = state.withLock { s -> Bool in
            guard now - s.lastWarning >= 60 else { return false }
            s.lastWarning = now
            return true
        }
        if due { logger.warning("\(message)") }
    }
}
