/// The master's side of the metrics: adds up what every worker counted in its scoreboard slot and
/// what the master knows itself, and writes the Prometheus text format from those totals
/// (`PrometheusText`): counters, gauges, and histograms straight from the bucket counts.
///
/// Workers' counters only grow while a worker lives, and a slot is reset for the next worker: the
/// exporter remembers what it last saw in each slot and adds only the difference, at each scrape
/// and one last time when a worker exits (before its slot is reused), so nothing a worker counted
/// is lost and nothing is counted twice.
public final class MetricsExporter {
    /// Every worker cell (`MetricCatalog` layout) added up over all slots and all workers that
    /// ever ran: counts, nanoseconds, bucket counts (saturating: a stray store cannot wrap them).
    private var totals = [UInt64](repeating: 0, count: MetricCatalog.cellsUsed)
    private var seen: [Int: [UInt64]] = [:]
    /// The master's own counters (`MetricCatalog.masterFamilies`), by `key`.
    private var own: [String: UInt64] = [:]
    /// The disk cache gauges, as last read from the scoreboard.
    private var diskBytes: UInt64 = 0
    private var diskEntries: UInt64 = 0
    /// Observations of one histogram series added per look at one slot, at most: more is beyond
    /// any real rate between two looks (a slot written over by a stray store), and is dropped.
    static let maxObservationsPerLook: UInt64 = 1_000_000
    /// Totals the status page shows.
    public private(set) var answered: UInt64 = 0
    public private(set) var shed: UInt64 = 0

    public init() {}

    static func key(_ name: String, _ value: String) -> String { value.isEmpty ? name : "\(name)|\(value)" }

    /// Adds what `slot` counted since the last look.
    public func collect(_ board: Scoreboard, slot: Int) {
        let now = (0..<MetricCatalog.cellsUsed).map { board.cell(slot, $0) }
        let before = seen[slot] ?? Array(repeating: 0, count: now.count)
        seen[slot] = now
        // A slot reset behind our back (never expected): start over from its current values.
        guard now != before, zip(now, before).allSatisfy({ $0 >= $1 }) else { return }
        for family in MetricCatalog.workerFamilies {
            guard let first = family.firstCell else { continue }
            for i in family.values.indices {
                let base = first + i * family.cellsPerSeries
                switch family.kind {
                case .counter, .secondsCounter:
                    let delta = now[base] - before[base]
                    add(delta, to: base)
                    if family.name == MetricCatalog.requests { answered &+= delta }
                case let .histogram(bounds):
                    let buckets = base..<(base + bounds.count + 1)
                    var total: UInt64 = 0
                    var overflow = false
                    for c in buckets {
                        let (t, o) = total.addingReportingOverflow(now[c] - before[c])
                        total = t
                        overflow = overflow || o
                    }
                    // A count no worker could reach between two looks is dropped, not added.
                    guard total > 0, !overflow, total <= MetricsExporter.maxObservationsPerLook else { continue }
                    for c in buckets { add(now[c] - before[c], to: c) }
                    let sum = base + bounds.count + 1
                    add(now[sum] - before[sum], to: sum)
                case .gauge:
                    break
                }
            }
        }
    }

    private func add(_ amount: UInt64, to cell: Int) {
        let (t, overflow) = totals[cell].addingReportingOverflow(amount)
        totals[cell] = overflow ? .max : t
    }

    /// The slot was reset for a new worker: its counters start from zero.
    public func forget(slot: Int) { seen[slot] = nil }

    /// The master answered `count` connections 503 itself.
    public func shedConnections(_ count: Int) {
        guard count > 0 else { return }
        own[MetricCatalog.shed, default: 0] += UInt64(count)
        if let cell = MetricCatalog.family(MetricCatalog.requests)?.cell(for: "5xx") { add(UInt64(count), to: cell) }
        shed += UInt64(count)
        answered += UInt64(count)
    }

    public enum RestartCause: String { case crash, deadline, recycle, reload }

    public func restarted(_ cause: RestartCause, count: Int = 1) {
        own[MetricsExporter.key(MetricCatalog.restarts, cause.rawValue), default: 0] += UInt64(count)
    }

    /// The text format, with the gauges as given.
    public func exposition(busy: Int, idle: Int, uptime: Double, board: Scoreboard?) -> [UInt8] {
        if let board {
            diskBytes = board.global(.diskBytes)
            diskEntries = board.global(.diskEntries)
        }
        let gauges: [String: Double] = [
            MetricsExporter.key(MetricCatalog.workers, "busy"): Double(busy),
            MetricsExporter.key(MetricCatalog.workers, "idle"): Double(idle),
            MetricCatalog.uptime: uptime,
            MetricCatalog.diskBytes: Double(diskBytes),
            MetricCatalog.diskEntries: Double(diskEntries),
        ]
        var text = PrometheusText()
        for family in ExpositionLayout.families {
            text.append(family.header)
            for series in family.series {
                switch series.kind {
                case let .count(prefix):
                    let count = series.cell.map { totals[$0] } ?? own[series.key] ?? 0
                    text.line(prefix, min(count, UInt64(Int64.max)))
                case let .seconds(prefix):
                    let ns = series.cell.map { totals[$0] } ?? 0
                    // As swift-prometheus wrote a floating-point counter: `0` until it counted.
                    if ns == 0 { text.line(prefix, UInt64(0)) } else { text.line(prefix, Double(ns) / 1e9) }
                case let .histogram(buckets, sum, count):
                    guard let base = series.cell else { continue }
                    var cumulative: UInt64 = 0
                    for (i, prefix) in buckets.enumerated() {
                        cumulative &+= totals[base + i]
                        text.line(prefix, cumulative)
                    }
                    text.line(sum, Double(totals[base + buckets.count]) / 1e9)
                    text.line(count, cumulative)
                case let .gauge(prefix):
                    text.line(prefix, gauges[series.key] ?? 0)
                }
            }
        }
        return text.bytes
    }
}

/// `MetricCatalog.allFamilies` rendered once: headers and every sample's name and labels.
enum ExpositionLayout {
    struct Family {
        var header: [UInt8]
        var series: [Series]
    }

    struct Series {
        enum Kind {
            case count([UInt8])
            case seconds([UInt8])
            /// One prefix per bucket bound and `+Inf` (cells `cell...`), then `_sum`, `_count`.
            case histogram(buckets: [[UInt8]], sum: [UInt8], count: [UInt8])
            case gauge([UInt8])
        }

        var kind: Kind
        /// The series' first worker cell; nil for the master's own.
        var cell: Int?
        /// `MetricsExporter.key` of the series.
        var key: String
    }

    static let families: [Family] = MetricCatalog.allFamilies.map { family in
        Family(header: PrometheusText.header(family.name, help: family.help, type: family.kind.prometheusType),
               series: family.values.enumerated().map { i, value in
                   let labels = family.labels(value)
                   let prefix = PrometheusText.samplePrefix(family.name, labels: labels)
                   let kind: Series.Kind
                   switch family.kind {
                   case .counter: kind = .count(prefix)
                   case .secondsCounter: kind = .seconds(prefix)
                   case .gauge: kind = .gauge(prefix)
                   case let .histogram(bounds):
                       let les = bounds.map { "\($0)" } + ["+Inf"]
                       kind = .histogram(buckets: les.map { PrometheusText.samplePrefix(family.name + "_bucket", labels: labels + [("le", $0)]) },
                                         sum: PrometheusText.samplePrefix(family.name + "_sum", labels: labels),
                                         count: PrometheusText.samplePrefix(family.name + "_count", labels: labels))
                   }
                   return Series(kind: kind, cell: family.firstCell.map { $0 + i * family.cellsPerSeries },
                                 key: MetricsExporter.key(family.name, value))
               })
    }
}

extension MetricFamily.Kind {
    /// The `# TYPE` of the family.
    var prometheusType: String {
        switch self {
        case .counter, .secondsCounter: "counter"
        case .histogram: "histogram"
        case .gauge: "gauge"
        }
    }
}
