import Prometheus

/// The exporter as it was (swift-prometheus, histograms rebuilt by replaying observations), kept
/// only to compare `MetricsExporter` with it; to be removed.
///
/// Workers' counters only grow while a worker lives, and a slot is reset for the next worker: the
/// exporter remembers what it last saw in each slot and records only the difference, at each
/// scrape and one last time when a worker exits (before its slot is reused), so nothing a worker
/// counted is lost and nothing is counted twice.
final class LegacyMetricsExporter {
    let registry = PrometheusCollectorRegistry()
    private var counters: [String: Counter] = [:]
    private var secondsCounters: [String: Counter] = [:]
    private var histograms: [String: ValueHistogram] = [:]
    private var gauges: [String: Gauge] = [:]
    private var seen: [Int: [UInt64]] = [:]
    /// Observations of one histogram series replayed per look at one slot, at most: a million
    /// requests in one worker between two scrapes (or between a scrape and its exit) is beyond any
    /// real rate, and replaying costs about 0.1 µs each.
    static let maxReplayedObservations: UInt64 = 1_000_000
    /// Totals the status page shows.
    public private(set) var answered: UInt64 = 0
    public private(set) var shed: UInt64 = 0

    public init() {
        for family in MetricCatalog.allFamilies {
            for value in family.values {
                let key = LegacyMetricsExporter.key(family.name, value)
                let descriptor = MetricNameDescriptor(metricName: family.name, unitName: "", helpText: family.help)
                let labels = family.labels(value)
                switch family.kind {
                case .counter:
                    counters[key] = registry.makeCounter(descriptor: descriptor, labels: labels)
                case .secondsCounter:
                    secondsCounters[key] = registry.makeCounter(descriptor: descriptor, labels: labels)
                case let .histogram(bounds):
                    histograms[key] = registry.makeValueHistogram(descriptor: descriptor, labels: labels, buckets: bounds)
                case .gauge:
                    gauges[key] = registry.makeGauge(descriptor: descriptor, labels: labels)
                }
            }
        }
    }

    static func key(_ name: String, _ value: String) -> String { value.isEmpty ? name : "\(name)|\(value)" }

    /// Records what `slot` counted since the last look.
    public func collect(_ board: Scoreboard, slot: Int) {
        let now = (0..<MetricCatalog.cellsUsed).map { board.cell(slot, $0) }
        let before = seen[slot] ?? Array(repeating: 0, count: now.count)
        seen[slot] = now
        // A slot reset behind our back (never expected): start over from its current values.
        guard zip(now, before).allSatisfy({ $0 >= $1 }) else { return }
        let delta = zip(now, before).map { $0 - $1 }
        guard delta.contains(where: { $0 > 0 }) else { return }
        for family in MetricCatalog.workerFamilies {
            guard let first = family.firstCell else { continue }
            for (i, value) in family.values.enumerated() {
                let base = first + i * family.cellsPerSeries
                let key = LegacyMetricsExporter.key(family.name, value)
                switch family.kind {
                case .counter:
                    if delta[base] > 0 { counters[key]?.increment(by: Int64(clamping: delta[base])) }
                    if family.name == MetricCatalog.requests { answered &+= delta[base] }
                case .secondsCounter:
                    if delta[base] > 0 { secondsCounters[key]?.increment(by: Double(delta[base]) / 1e9) }
                case let .histogram(bounds):
                    let counts = Array(delta[base..<(base + bounds.count + 1)])
                    let sum = Double(delta[base + bounds.count + 1]) / 1e9
                    guard let h = histograms[key], counts.contains(where: { $0 > 0 }) else { continue }
                    // One `record` per observation: a count no worker could reach between two looks
                    // (a slot written over by a stray store) is dropped, not replayed for hours.
                    let total = counts.reduce(UInt64(0)) { $0.addingReportingOverflow($1).partialValue }
                    guard total <= LegacyMetricsExporter.maxReplayedObservations, total >= counts.max() ?? 0 else { continue }
                    for (v, n) in HistogramReplay.observations(counts: counts, bounds: bounds, sum: sum) {
                        for _ in 0..<n { h.record(v) }
                    }
                case .gauge:
                    break
                }
            }
        }
    }

    /// The slot was reset for a new worker: its counters start from zero.
    public func forget(slot: Int) { seen[slot] = nil }

    /// The master answered `count` connections 503 itself.
    public func shedConnections(_ count: Int) {
        guard count > 0 else { return }
        counters[MetricCatalog.shed]?.increment(by: Int64(count))
        counters[LegacyMetricsExporter.key(MetricCatalog.requests, "5xx")]?.increment(by: Int64(count))
        shed += UInt64(count)
        answered += UInt64(count)
    }

    public func restarted(_ cause: MetricsExporter.RestartCause, count: Int = 1) {
        counters[LegacyMetricsExporter.key(MetricCatalog.restarts, cause.rawValue)]?.increment(by: Int64(count))
    }

    /// The text format, after the gauges are set.
    public func exposition(busy: Int, idle: Int, uptime: Double, board: Scoreboard?) -> [UInt8] {
        gauges[LegacyMetricsExporter.key(MetricCatalog.workers, "busy")]?.set(Double(busy))
        gauges[LegacyMetricsExporter.key(MetricCatalog.workers, "idle")]?.set(Double(idle))
        gauges[MetricCatalog.uptime]?.set(uptime)
        if let board {
            gauges[MetricCatalog.diskBytes]?.set(Double(board.global(.diskBytes)))
            gauges[MetricCatalog.diskEntries]?.set(Double(board.global(.diskEntries)))
        }
        return registry.emitToBuffer()
    }
}
