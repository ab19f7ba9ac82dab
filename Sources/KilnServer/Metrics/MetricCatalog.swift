import KilnOrigins
import KilnPipeline

/// Every metric Kiln exports (`/_kiln/metrics`): name, help, type, label, and for the ones the
/// workers count, where they live in a scoreboard slot. The one place names are written: the
/// workers' swift-metrics handlers (`ScoreboardMetricsFactory`) look their cells up here, the
/// master's exporter (`MetricsExporter`) writes the same families in this order, and docs/operations.md's
/// metrics table follows it.
public struct MetricFamily: Sendable {
    public enum Kind: Sendable, Equatable {
        case counter
        /// Seconds; the worker stores nanoseconds (`*_seconds_total` counters).
        case secondsCounter
        /// Seconds with these bucket bounds.
        case histogram([Double])
        case gauge
    }

    public let name: String
    public let help: String
    public let kind: Kind
    /// The label's name, nil for a family of one series.
    public let label: String?
    /// The label's values, in cell order (`[""]` without a label).
    public let values: [String]
    /// The first cell in a worker's slot, nil for the master's own families.
    public let firstCell: Int?

    /// Cells per series: one per counter; per histogram one per bucket, one above the last bound,
    /// the sum in nanoseconds and the count.
    public var cellsPerSeries: Int {
        if case let .histogram(bounds) = kind { return bounds.count + 3 }
        return 1
    }

    public var cellCount: Int { firstCell == nil ? 0 : values.count * cellsPerSeries }

    /// The first cell of the series with label value `value`.
    public func cell(for value: String) -> Int? {
        guard let first = firstCell, let i = values.firstIndex(of: value) else { return nil }
        return first + i * cellsPerSeries
    }

    /// Prometheus labels of the series `value`.
    public func labels(_ value: String) -> [(String, String)] {
        label.map { [($0, value)] } ?? []
    }
}

public enum MetricCatalog {
    /// Bounds of the duration histograms, in seconds.
    public static let durationBuckets: [Double] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    /// The render stages timed per request (`RenderStage` names).
    public static let stages = ["wait", "load", "sniff", "decode", "colour", "process", "encode", "store"]
    public static let formats = ["jpeg", "png", "webp"]

    public static let requests = "kiln_http_requests_total"
    public static let cacheOutcomes = "kiln_cache_requests_total"
    public static let renders = "kiln_renders_total"
    public static let abandoned = "kiln_requests_abandoned_total"
    public static let requestDuration = "kiln_request_duration_seconds"
    public static let stageDuration = "kiln_stage_duration_seconds"
    public static let sourceBytes = "kiln_source_bytes_total"
    public static let outputBytes = "kiln_output_bytes_total"
    public static let sourceFormats = "kiln_source_formats_total"
    public static let outputFormats = "kiln_output_formats_total"
    public static let lockWaits = "kiln_lock_waits_total"
    public static let lockWaitSeconds = "kiln_lock_wait_seconds_total"
    public static let evictions = "kiln_disk_cache_evictions_total"
    public static let originRequests = "kiln_origin_requests_total"
    public static let originBytes = "kiln_origin_bytes_total"
    public static let originSeconds = "kiln_origin_fetch_seconds_total"
    public static let originLimitWaitSeconds = "kiln_origin_limit_wait_seconds_total"
    public static let originResumed = "kiln_origin_resumed_total"
    public static let sharedReads = "kiln_shared_cache_reads_total"
    public static let sharedWrites = "kiln_shared_cache_writes_total"
    public static let sharedWrittenBytes = "kiln_shared_cache_written_bytes_total"
    public static let traceSpans = "kiln_trace_spans_total"
    /// `kiln_trace_spans_total`'s results.
    public static let traceSpanResults = ["exported", "dropped", "failed"]
    /// `kiln_cache_requests_total`'s outcomes.
    public static let outcomes = ["hit_memory", "hit_disk", "hit_shared", "miss", "coalesced", "negative"]
    /// `kiln_shared_cache_reads_total`'s results (`SharedLookup.label`).
    public static let sharedReadResults = ["hit", "miss", "error", "skipped"]
    /// `kiln_shared_cache_writes_total`'s results (`SharedWrite.label`).
    public static let sharedWriteResults = ["ok", "error", "skipped"]
    public static let shed = "kiln_requests_shed_total"
    public static let restarts = "kiln_worker_restarts_total"
    public static let workers = "kiln_workers"
    public static let diskBytes = "kiln_disk_cache_bytes"
    public static let diskEntries = "kiln_disk_cache_entries"
    public static let uptime = "kiln_uptime_seconds"

    /// What the workers count, in their slots.
    public static let workerFamilies: [MetricFamily] = layout([
        (requests, "answers by status class (the master's fast 503s included)", .counter, "class", ["2xx", "3xx", "4xx", "5xx"]),
        (cacheOutcomes, "answers by cache outcome (X-Cache); negative: a remembered failure", .counter, "outcome", outcomes),
        (renders, "renders: X-Cache MISS answers, failed renders included", .counter, nil, [""]),
        (abandoned, "requests stopped because the web server closed the connection (logged as 499)", .counter, nil, [""]),
        (requestDuration, "time in a worker from the request read to the answer written", .histogram(durationBuckets), nil, [""]),
        (stageDuration, "time per render stage (wait: for another worker rendering the same variant)",
         .histogram(durationBuckets), "stage", stages),
        (sourceBytes, "bytes of the sources read by renders", .counter, nil, [""]),
        (outputBytes, "bytes of the image answers sent (HEAD: none)", .counter, nil, [""]),
        (sourceFormats, "renders by source format", .counter, "format", formats),
        (outputFormats, "renders by output format", .counter, "format", formats),
        (lockWaits, "requests that waited for another worker rendering the same variant", .counter, nil, [""]),
        (lockWaitSeconds, "time spent in those waits", .secondsCounter, nil, [""]),
        (evictions, "disk cache entries removed by sweeps (least recently used, expired failures)", .counter, nil, [""]),
        (originRequests, "requests to remote origins (source.origins) by outcome; limited: no slot or token within source.fetch_timeout",
         .counter, "outcome", OriginFetch.Outcome.allCases.map(\.rawValue)),
        (originBytes, "body bytes received from remote origins", .counter, nil, [""]),
        (originSeconds, "time spent fetching from remote origins, waits for their limits included", .secondsCounter, nil, [""]),
        (originLimitWaitSeconds, "time fetches waited for source.origin_concurrency and source.origin_rate", .secondsCounter, nil, [""]),
        (originResumed, "downloads from remote origins that continued an interrupted one (Range)", .counter, nil, [""]),
        (sharedReads, "lookups in the shared result store (cache.shared) by result; error: failed, timed out or discarded; skipped: not asked after a recent failure",
         .counter, "result", sharedReadResults),
        (sharedWrites, "results written to the shared result store after the answer; skipped: over cache.shared_max_bytes or after a recent failure",
         .counter, "result", sharedWriteResults),
        (sharedWrittenBytes, "body bytes written to the shared result store", .counter, nil, [""]),
        (traceSpans, "spans of sampled requests ([tracing]) by fate: exported to the collector; dropped: the queue (tracing.queue_size) was full; failed: the export failed or timed out",
         .counter, "result", traceSpanResults),
    ])

    /// What the master knows itself.
    public static let masterFamilies: [MetricFamily] = [
        MetricFamily(name: shed, help: "connections the master answered 503 because every worker was busy for server.queue_timeout",
                     kind: .counter, label: nil, values: [""], firstCell: nil),
        MetricFamily(name: restarts, help: "workers replaced, by cause", kind: .counter, label: "cause",
                     values: ["crash", "deadline", "recycle", "reload"], firstCell: nil),
        MetricFamily(name: workers, help: "workers of the current generation", kind: .gauge, label: "state",
                     values: ["busy", "idle"], firstCell: nil),
        MetricFamily(name: diskBytes, help: "disk cache size after the last sweep (entries and temporary files)",
                     kind: .gauge, label: nil, values: [""], firstCell: nil),
        MetricFamily(name: diskEntries, help: "disk cache entries after the last sweep", kind: .gauge, label: nil, values: [""], firstCell: nil),
        MetricFamily(name: uptime, help: "seconds since the master started", kind: .gauge, label: nil, values: [""], firstCell: nil),
    ]

    public static var allFamilies: [MetricFamily] { workerFamilies + masterFamilies }

    /// Board-wide values (`kiln_sb_global`).
    public enum Global: Int32 {
        case diskBytes = 0
        case diskEntries = 1
        case diskSwept = 2
        /// Connections taken from the main socket's listen queue, by workers and by the master
        /// (`QueueWaitTracker`).
        case acceptedConnections = 3
    }

    public static func family(_ name: String) -> MetricFamily? {
        allFamilies.first { $0.name == name }
    }

    /// The cell of a worker series: `label` is a family name, `dimensions` its one label (or none).
    public static func cell(label: String, dimensions: [(String, String)]) -> (MetricFamily, Int)? {
        guard let family = workerFamilies.first(where: { $0.name == label }) else { return nil }
        let value = dimensions.first { $0.0 == family.label }?.1 ?? ""
        return family.cell(for: value).map { (family, $0) }
    }

    private static func layout(_ specs: [(String, String, MetricFamily.Kind, String?, [String])]) -> [MetricFamily] {
        var next = 0
        return specs.map { name, help, kind, label, values in
            let f = MetricFamily(name: name, help: help, kind: kind, label: label, values: values, firstCell: next)
            next += f.cellCount
            return f
        }
    }

    /// Cells the worker families use (at most `KILN_SB_CELLS`).
    public static var cellsUsed: Int { workerFamilies.reduce(0) { $0 + $1.cellCount } }
}
