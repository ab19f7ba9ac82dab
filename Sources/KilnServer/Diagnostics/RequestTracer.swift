import Glibc
import KilnHTTP
import KilnModel
import KilnPOSIX
import KilnTracing

/// A worker's traces (`[tracing]`): when a request arrives, `begin` decides its trace from the
/// `traceparent` nginx passes on (nginx/kiln-params.conf) and the sampler; once the answer is
/// written and the work after it done, `end` turns the request into spans and hands them to the
/// exporter's queue, which never blocks.
///
/// One SERVER span per request, named by its method (OpenTelemetry's HTTP conventions, as the
/// URL has no route template), child of the caller's span when a `traceparent` came; one
/// INTERNAL child span per stage that ran (`Timeline.intervals`: spec, fetch or load, sniff,
/// decode, colour, process, encode, key, cache, wait, cache.read, cache.write, store.read,
/// fallback) and `store.write` after the answer. docs/tracing.md lists the attributes.
public final class RequestTracer {
    /// One request's trace in progress.
    public struct Trace: Sendable {
        public var start: TraceStart
        /// Unix and monotonic nanoseconds at the same instant: the spans' times derive from them.
        let wallAnchor: Int64
        let monotonicAnchor: UInt64
    }

    let exporter: any SpanExporting
    let sampler: TraceSampler
    /// What every request span says of this worker (`kiln.worker`).
    let worker: TraceFacts
    /// Trace and span ids (the request thread's only).
    var ids = SpanIDGenerator()

    public init(exporter: any SpanExporting, sampler: TraceSampler, workerSlot: Int?) {
        self.exporter = exporter
        self.sampler = sampler
        var worker = TraceFacts()
        if let workerSlot { worker["kiln.worker"] = .int(workerSlot) }
        self.worker = worker
    }

    /// The resource of a worker's spans: the service, the process, the host.
    public static func resource(serviceName: String) -> TraceFacts {
        var facts = TraceFacts()
        facts["service.name"] = .string(serviceName)
        facts["process.pid"] = .int(Int(getpid()))
        var name = [CChar](repeating: 0, count: 256)
        if gethostname(&name, name.count - 1) == 0 {
            facts["host.name"] = .string(String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        facts["telemetry.sdk.name"] = .string("kiln")
        facts["telemetry.sdk.language"] = .string("swift")
        return facts
    }

    /// The trace of `request` (whose id is `requestID`), nil when it is not sampled (nothing more is recorded for it).
    public func begin(_ request: HTTPRequest, requestID: String) -> Trace? {
        let start = TraceStart.begin(traceparent: request.headers["traceparent"], tracestate: request.headers["tracestate"],
                                     requestID: requestID, sampler: sampler, using: &ids)
        guard start.sampled else { return nil }
        return Trace(start: start, wallAnchor: WallClock.nanoseconds(), monotonicAnchor: MonotonicClock.nanoseconds())
    }

    /// Queues the spans of `request`, answered with `response` (`bytes` body bytes written) when
    /// its answer was written at `answered` (monotonic nanoseconds); `late`: what ran after.
    /// `uri` is the request's URI as logs show it (signatures redacted).
    public func end(_ trace: Trace, _ request: HTTPRequest, _ response: HTTPResponse, uri: String, bytes: Int,
                    requestID: String, answered: UInt64, late: [Timeline.Interval]) {
        let start = trace.start
        func unix(_ monotonic: UInt64) -> UInt64 {
            UInt64(max(0, trace.wallAnchor + Int64(bitPattern: monotonic &- trace.monotonicAnchor)))
        }
        var facts = TraceFacts()
        facts["http.request.method"] = .string(request.method)
        // The path only: a query may carry an adapter's signature or token (imgix `s=`), which a
        // trace backend is no place for.
        facts["url.path"] = .string(String(uri.prefix { $0 != "?" }))
        facts["http.response.status_code"] = .int(response.status)
        facts["http.response.body.size"] = .int(bytes)
        facts["kiln.request_id"] = .string(requestID)
        facts.merge(worker)
        facts.merge(response.traceFacts)
        let status: SpanRecord.Status = response.status >= 500 ? .error(response.reason ?? HTTPResponse.reason(response.status)) : .unset
        var spans = [SpanRecord(traceID: start.traceID, spanID: start.spanID, parentSpanID: start.parentSpanID,
                                traceState: start.traceState, name: request.method, kind: .server,
                                start: unix(trace.monotonicAnchor), end: unix(answered), attributes: facts, status: status,
                                remoteParent: start.hasRemoteParent)]
        for interval in (response.timeline?.intervals ?? []) + late {
            spans.append(SpanRecord(traceID: start.traceID, spanID: TraceStart.newSpanID(using: &ids), parentSpanID: start.spanID,
                                    traceState: start.traceState, name: interval.name, kind: .internal,
                                    start: unix(interval.start), end: unix(interval.end)))
        }
        exporter.submit(spans)
    }
}
