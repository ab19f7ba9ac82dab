import KilnModel

/// `[tracing]`: OpenTelemetry traces of the requests, exported over OTLP/HTTP (protobuf) by each
/// worker (`SpanExporter`): off unless `tracing.endpoint` is set. docs/tracing.md says what a
/// trace holds.
public struct TracingConfiguration: ConfigSection, Equatable {
    /// The collector's OTLP/HTTP traces URL (`http://collector:4318/v1/traces`); empty: no traces.
    public var endpoint = Key.endpoint.defaultValue
    /// The share of requests without a sampled parent that are traced.
    public var sampleRatio = Key.sampleRatio.defaultValue
    /// Whether a `traceparent`'s sampled flag decides (parent-based sampling).
    public var followParent = Key.followParent.defaultValue
    /// Extra headers of every export (`Authorization: Bearer …`).
    public var headers = Key.headers.defaultValue
    /// `service.name` of the resource.
    public var serviceName = Key.serviceName.defaultValue
    /// Spans a worker keeps waiting for export; beyond it whole traces are dropped (counted).
    public var queueSize = Key.queueSize.defaultValue
    /// How often a worker sends what is queued.
    public var exportInterval: Double = Key.exportInterval.defaultValue
    /// How long one export may take (connection included).
    public var exportTimeout: Double = Key.exportTimeout.defaultValue

    public enum Key {
        public static let endpoint = Setting<String>.custom(
            "tracing.endpoint", default: "", type: "string", expected: "empty, or an http(s):// URL such as http://127.0.0.1:4318/v1/traces",
            doc: "where each worker sends its traces, OTLP over HTTP (protobuf): the collector's traces URL, `/v1/traces` included; empty: no traces",
            parse: { raw in
                let url = raw.trimmingSpacesAndTabs()
                return url.isEmpty || ConfigUnits.isHTTPURL(url, httpsToo: true) ? url : nil
            },
            format: { $0 })
        public static let sampleRatio = Setting.fraction(
            "tracing.sample_ratio", default: 1, in: 0...1,
            doc: "the share of requests traced when no sampled parent decides (by the trace id, so every tier that samples by ratio keeps the same traces)")
        public static let followParent = Setting.bool(
            "tracing.follow_parent", default: true,
            doc: "a `traceparent` header's sampled flag decides whether its request is traced (parent-based sampling); false: `sample_ratio` decides for every request, a parent's trace id is kept")
        public static let headers = Setting<[String]>.custom(
            "tracing.headers", default: [], type: "header list", expected: "`Name: value` headers separated by commas",
            doc: "headers of every export request, such as `Authorization: Bearer <token>` (prefer `KILN_TRACING_HEADERS` for tokens)",
            parse: { ConfigUnits.list($0) { ConfigUnits.header($0) != nil ? $0 : nil } },
            format: { $0.joined(separator: ",") }).secret()
        public static let serviceName = Setting.text(
            "tracing.service_name", default: "kiln", expected: "a name without control characters",
            doc: "the `service.name` of every span's resource",
            check: { !$0.isEmpty && !$0.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        public static let queueSize = Setting.count(
            "tracing.queue_size", default: 2048, in: 16...1_000_000,
            doc: "spans a worker keeps for export; when the collector is slow or down, whole traces beyond it are dropped and counted (`kiln_trace_spans_total{result=\"dropped\"}`): a request never waits for the collector")
        public static let exportInterval = Setting.duration(
            "tracing.export_interval", default: 1, in: 0.05...60,
            doc: "how often a worker's export thread sends the queued spans (sooner when half the queue is full)")
        public static let exportTimeout = Setting.duration(
            "tracing.export_timeout", default: 2, in: 0.05...60,
            doc: "how long one export may take, connecting included; a failed export's spans are dropped and counted")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.endpoint) { $0.endpoint = $1 },
        ConfigField(Key.sampleRatio) { $0.sampleRatio = $1 },
        ConfigField(Key.followParent) { $0.followParent = $1 },
        ConfigField(Key.headers) { $0.headers = $1 },
        ConfigField(Key.serviceName) { $0.serviceName = $1 },
        ConfigField(Key.queueSize) { $0.queueSize = $1 },
        ConfigField(Key.exportInterval) { $0.exportInterval = $1 },
        ConfigField(Key.exportTimeout) { $0.exportTimeout = $1 },
    ]

    public init() {}

    /// Whether requests are traced at all.
    public var isEnabled: Bool { !endpoint.isEmpty }

    /// `headers` as pairs.
    public var headerPairs: [(String, String)] { headers.compactMap(ConfigUnits.header) }

    /// The sampler these settings describe.
    public var sampler: TraceSampler { TraceSampler(ratio: sampleRatio, followParent: followParent) }
}
