import KilnOrigins
import KilnHTTP
import CoreMetrics
import KilnPipeline
import KilnModel

/// What a worker counts per request, through swift-metrics (`Counter`, `Timer`) on a backend that
/// writes into its scoreboard slot (`ScoreboardMetricsFactory`). The master adds the slots up.
/// The metric objects are made once, at start; recording is a few relaxed atomic adds.
public final class WorkerMetrics: Sendable {
    private let requests: [String: Counter]
    private let outcomes: [String: Counter]
    private let renders: Counter
    private let abandoned: Counter
    private let requestDuration: CoreMetrics.Timer
    private let stages: [String: CoreMetrics.Timer]
    private let sourceBytes: Counter
    private let outputBytes: Counter
    private let sourceFormats: [String: Counter]
    private let outputFormats: [String: Counter]
    private let lockWaits: Counter
    private let lockWaitNanoseconds: Counter
    private let evictions: Counter
    private let originRequests: [String: Counter]
    private let originBytes: Counter
    private let originNanoseconds: Counter
    private let originLimitWaitNanoseconds: Counter
    private let originResumed: Counter
    private let sharedReads: [String: Counter]
    private let sharedWrites: [String: Counter]
    private let sharedWrittenBytes: Counter
    private let traceSpans: [String: Counter]

    public init(factory: MetricsFactory) {
        typealias C = MetricCatalog
        func counter(_ name: String, _ label: String? = nil, _ value: String = "") -> Counter {
            Counter(label: name, dimensions: label.map { [($0, value)] } ?? [], factory: factory)
        }
        func counters(_ name: String, _ label: String, _ values: [String]) -> [String: Counter] {
            Dictionary(uniqueKeysWithValues: values.map { ($0, counter(name, label, $0)) })
        }
        requests = counters(C.requests, "class", ["2xx", "3xx", "4xx", "5xx"])
        outcomes = counters(C.cacheOutcomes, "outcome", C.outcomes)
        renders = counter(C.renders)
        abandoned = counter(C.abandoned)
        requestDuration = CoreMetrics.Timer(label: C.requestDuration, dimensions: [], factory: factory)
        stages = Dictionary(uniqueKeysWithValues: C.stages.map {
            ($0, CoreMetrics.Timer(label: C.stageDuration, dimensions: [("stage", $0)], factory: factory))
        })
        sourceBytes = counter(C.sourceBytes)
        outputBytes = counter(C.outputBytes)
        sourceFormats = counters(C.sourceFormats, "format", C.formats)
        outputFormats = counters(C.outputFormats, "format", C.formats)
        lockWaits = counter(C.lockWaits)
        lockWaitNanoseconds = counter(C.lockWaitSeconds)
        evictions = counter(C.evictions)
        originRequests = counters(C.originRequests, "outcome", OriginFetch.Outcome.allCases.map(\.rawValue))
        originBytes = counter(C.originBytes)
        originNanoseconds = counter(C.originSeconds)
        originLimitWaitNanoseconds = counter(C.originLimitWaitSeconds)
        originResumed = counter(C.originResumed)
        sharedReads = counters(C.sharedReads, "result", C.sharedReadResults)
        sharedWrites = counters(C.sharedWrites, "result", C.sharedWriteResults)
        sharedWrittenBytes = counter(C.sharedWrittenBytes)
        traceSpans = counters(C.traceSpans, "result", C.traceSpanResults)
    }

    /// The shared result store was looked up.
    public func sharedLookup(_ lookup: SharedLookup) {
        sharedReads[lookup.label]?.increment()
    }

    /// A result was written to the shared result store (or not).
    /// Spans the trace exporter sent, dropped (queue full) or lost (a failed export); called from
    /// the exporter's thread too (the cells are atomic).
    public func traceSpans(exported: Int, dropped: Int, failed: Int) {
        for (result, n) in [("exported", exported), ("dropped", dropped), ("failed", failed)] where n > 0 {
            traceSpans[result]?.increment(by: Int64(n))
        }
    }

    public func sharedWrite(_ write: SharedWrite) {
        sharedWrites[write.label]?.increment()
        if case .written(let bytes) = write, bytes > 0 { sharedWrittenBytes.increment(by: Int64(bytes)) }
    }

    /// A remote source asked its origin.
    public func originFetched(_ fetch: OriginFetch) {
        originRequests[fetch.outcome.rawValue]?.increment()
        if fetch.bytes > 0 { originBytes.increment(by: Int64(fetch.bytes)) }
        originNanoseconds.increment(by: Int64(fetch.seconds * 1e9))
        if fetch.waited > 0 { originLimitWaitNanoseconds.increment(by: Int64(fetch.waited * 1e9)) }
        if fetch.resumed { originResumed.increment() }
    }

    /// One answered request: its status, the body bytes sent, where it came from, how long it
    /// took in the worker, and the time of each render stage that ran.
    public func requestFinished(status: Int, bodyBytes: Int, cache: CacheOutcome?, nanoseconds: Int64,
                                stages stageTimes: [RenderStage: Int64]) {
        let klass = status >= 500 ? "5xx" : status >= 400 ? "4xx" : status >= 300 ? "3xx" : "2xx"
        requests[klass]?.increment()
        if status == 499 { abandoned.increment() }
        if let outcome = WorkerMetrics.outcome(cache, status: status) { outcomes[outcome]?.increment() }
        if cache == .miss { renders.increment() }
        if status == 200 { outputBytes.increment(by: Int64(bodyBytes)) }
        requestDuration.recordNanoseconds(nanoseconds)
        for (stage, ns) in stageTimes {
            stages[stage.name]?.recordNanoseconds(ns)
            if stage == .wait {
                lockWaits.increment()
                lockWaitNanoseconds.increment(by: ns)
            }
        }
    }

    /// A render read its source.
    public func sourceRead(_ format: ImageFormat, bytes: Int) {
        sourceBytes.increment(by: Int64(bytes))
        sourceFormats[format.rawValue]?.increment()
    }

    /// A render encoded its result.
    public func resultEncoded(_ format: ImageFormat) {
        outputFormats[format.rawValue]?.increment()
    }

    /// A disk cache sweep removed `entries`.
    public func evicted(_ entries: Int) {
        if entries > 0 { evictions.increment(by: Int64(entries)) }
    }

    /// The `cache_requests_total` outcome of an answer: where it came from, or `negative` when a
    /// remembered failure was served (an error status with a cache hit).
    static func outcome(_ cache: CacheOutcome?, status: Int) -> String? {
        switch cache {
        case .miss?: "miss"
        case .hitMemory?: status >= 400 ? "negative" : "hit_memory"
        case .hitDisk?: status >= 400 ? "negative" : "hit_disk"
        case .hitShared?: status >= 400 ? "negative" : "hit_shared"
        case .coalesced?: status >= 400 ? "negative" : "coalesced"
        case nil: nil
        }
    }
}
