import KilnFastCGI
import KilnHTTP
import KilnModel
import Logging
import Synchronization

/// One access line per request, written by the FastCGI responder once the answer went out, so
/// status, bytes and cache outcome are what the client got (a `304` and a `HEAD` answer carry 0
/// body bytes; a request the web server gave up on is a `499`):
///
///     time=2026-11-23T21:40:01.123Z level=info logger=kiln.worker msg=access pid=4242
///       request_id=5f0c... method=GET uri=/w:300/a.jpg status=200 bytes=18234 cache=MISS
///       duration_ms=41.7 stage_ms.load=0.2 stage_ms.decode=30.1 ... stage_ms.total=41.2
///
/// `reason` is added on error answers: the public one-line reason, or for a 5xx the library
/// detail (which only the log gets). 5xx lines are at `error` and written even when
/// `log.access = off`; every other line is at `info`.
///
/// Traces: `stage_ms` is the request's `Timeline` (the same phases as `Server-Timing`); the
/// OpenTelemetry spans of a sampled request (`RequestTracer`, docs/tracing.md) come from the same
/// timeline's intervals, and their trace id is the request id when no `traceparent` came.
public struct AccessLog: Sendable {
    /// `log.access`: write a line for every request at `info`.
    public var enabled: Bool
    /// `log.trust_request_id`: take a client's `X-Request-Id`.
    public var trustRequestID: Bool

    public init(enabled: Bool = LogConfiguration.Key.access.defaultValue,
                trustRequestID: Bool = LogConfiguration.Key.trustRequestID.defaultValue) {
        self.enabled = enabled
        self.trustRequestID = trustRequestID
    }

    public init(_ configuration: LogConfiguration) {
        self.init(enabled: configuration.access, trustRequestID: configuration.trustRequestID)
    }

    private static let configured = Mutex(AccessLog())

    /// This process's settings, set by `LogLineHandler.bootstrap` (the defaults until then).
    public static var process: AccessLog {
        get { configured.withLock { $0 } }
        set { configured.withLock { $0 = newValue } }
    }

    /// The id of `request` (see `RequestID.resolve`).
    public func requestID(for request: HTTPRequest) -> String {
        RequestID.resolve(request, trustHeader: trustRequestID)
    }

    /// Body bytes the client receives for `response` to a request with `method`.
    public static func bodyBytes(_ response: HTTPResponse, method: String) -> Int {
        method == "HEAD" || response.status == 304 ? 0 : response.body.count
    }

    /// Logs the access line of `request` (answered with `response`; `bytes` body bytes written,
    /// `milliseconds` since the request was read), unless access lines are off and it is not a 5xx.
    public func write(_ request: HTTPRequest, _ response: HTTPResponse, bytes: Int, milliseconds: Double,
                      logger: Logger) {
        let level: Logger.Level = response.status >= 500 ? .error : .info
        guard enabled || level == .error else { return }
        logger.log(level: level, "access", metadata: AccessLog.fields(request, response, bytes: bytes,
                                                                       milliseconds: milliseconds))
    }

    static func fields(_ request: HTTPRequest, _ response: HTTPResponse, bytes: Int, milliseconds: Double) -> Logger.Metadata {
        var m: Logger.Metadata = [
            "method": .string(request.method),
            "uri": .string(request.uri),
            "status": .stringConvertible(response.status),
            "bytes": .stringConvertible(bytes),
            "cache": .string(response.cacheOutcome?.headerValue ?? "-"),
            "duration_ms": .stringConvertible(AccessLog.rounded(milliseconds)),
        ]
        if let timeline = response.timeline, !timeline.phases.isEmpty {
            var stages: Logger.Metadata = [:]
            for phase in timeline.phases { stages[phase.name] = .stringConvertible(AccessLog.rounded(phase.milliseconds)) }
            stages["total"] = .stringConvertible(AccessLog.rounded(timeline.totalMilliseconds))
            m["stage_ms"] = .dictionary(stages)
        }
        if let reason = response.reason { m["reason"] = .string(reason) }
        return m
    }

    /// Milliseconds to the hundredth.
    static func rounded(_ ms: Double) -> Double {
        (ms * 100).rounded() / 100
    }
}
