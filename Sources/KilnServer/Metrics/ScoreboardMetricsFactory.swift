import KilnHTTP
import CoreMetrics

/// A swift-metrics backend that counts into a worker's scoreboard slot: counters add to their
/// cell, timers add to a histogram's bucket, sum and count cells. The master adds every slot up
/// (`MetricsExporter`). Labels and dimensions must be in `MetricCatalog`; anything else is counted
/// nowhere (a no-op handler), so a typo cannot write into another metric's cells.
public final class ScoreboardMetricsFactory: MetricsFactory, @unchecked Sendable {
    let board: Scoreboard
    let slot: Int

    public init(board: Scoreboard, slot: Int) {
        self.board = board
        self.slot = slot
    }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> CounterHandler {
        guard let (_, cell) = MetricCatalog.cell(label: label, dimensions: dimensions) else { return NOOPMetricsHandler.instance }
        return CellCounter(board: board, slot: slot, cell: cell)
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> FloatingPointCounterHandler {
        NOOPMetricsHandler.instance
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> MeterHandler {
        NOOPMetricsHandler.instance
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> RecorderHandler {
        NOOPMetricsHandler.instance
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> TimerHandler {
        guard let (family, cell) = MetricCatalog.cell(label: label, dimensions: dimensions),
              case let .histogram(bounds) = family.kind else { return NOOPMetricsHandler.instance }
        return CellHistogram(board: board, slot: slot, first: cell, bounds: bounds)
    }

    public func destroyCounter(_ handler: CounterHandler) {}
    public func destroyMeter(_ handler: MeterHandler) {}
    public func destroyRecorder(_ handler: RecorderHandler) {}
    public func destroyTimer(_ handler: TimerHandler) {}
}

/// One counter cell.
final class CellCounter: CounterHandler, @unchecked Sendable {
    let board: Scoreboard
    let slot: Int
    let cell: Int

    init(board: Scoreboard, slot: Int, cell: Int) {
        self.board = board
        self.slot = slot
        self.cell = cell
    }

    func increment(by amount: Int64) {
        if amount > 0 { board.add(slot, cell: cell, UInt64(amount)) }
    }

    /// Counters only grow: the master computes what changed since it last looked.
    func reset() {}
}

/// A histogram in cells: `bounds.count` buckets (each counts the durations up to its bound and
/// above the previous one), one above the last bound, the sum in nanoseconds, the count.
final class CellHistogram: TimerHandler, @unchecked Sendable {
    let board: Scoreboard
    let slot: Int
    let first: Int
    let boundsNanoseconds: [Int64]

    init(board: Scoreboard, slot: Int, first: Int, bounds: [Double]) {
        self.board = board
        self.slot = slot
        self.first = first
        boundsNanoseconds = bounds.map { Int64(($0 * 1e9).rounded()) }
    }

    func recordNanoseconds(_ duration: Int64) {
        let d = max(0, duration)
        let bucket = boundsNanoseconds.firstIndex { d <= $0 } ?? boundsNanoseconds.count
        board.add(slot, cell: first + bucket, 1)
        board.add(slot, cell: first + boundsNanoseconds.count + 1, UInt64(d))
        board.add(slot, cell: first + boundsNanoseconds.count + 2, 1)
    }
}
