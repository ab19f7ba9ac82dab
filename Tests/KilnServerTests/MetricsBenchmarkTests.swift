import Foundation
import Glibc
import KilnPipeline
import Testing
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// What the worker's per-request bookkeeping costs: the scoreboard and stage timing alone, and
/// with the metrics counting (`server.metrics`), per request; and what a scrape costs the master
/// (adding up the slots, writing the text). Printed, never asserted (run with
/// `KILN_BENCH=1 swift test -c release --filter MetricsBenchmark`).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["KILN_BENCH"] != nil))
struct MetricsBenchmarkTests {
    static func perRequest(_ monitor: RequestMonitor, requests: Int) throws -> Double {
        let clock = ContinuousClock()
        let stages: [RenderStage] = [.cache, .wait, .load, .sniff, .decode, .process, .process, .encode, .store]
        let elapsed = try clock.measure {
            for _ in 0..<requests {
                monitor.begin(uri: "/rs:300:200:fill/f:webp/photos/cat.jpg", connectionFD: -1)
                for s in stages { try monitor.enter(s, detail: s == .process ? "rs:300:200:fill" : "") }
                monitor.lockTaken(waited: false)
                monitor.sourceRead(format: .jpeg, bytes: 120_000)
                monitor.resultEncoded(format: .webp, bytes: 9_000)
                monitor.responding()
                monitor.end(status: 200, bodyBytes: 9_000, cache: .miss)
            }
        }
        return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(requests)
    }

    @Test func bookkeepingPerRequest() throws {
        let board = try Scoreboard.create(slots: 4)
        defer { close(board.fd) }
        let n = 200_000
        var without: [Double] = [], with: [Double] = []
        for _ in 0..<5 {
            without.append(try MetricsBenchmarkTests.perRequest(RequestMonitor(scoreboard: board, slot: 0), requests: n))
            let metrics = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
            with.append(try MetricsBenchmarkTests.perRequest(RequestMonitor(scoreboard: board, slot: 1, metrics: metrics), requests: n))
        }
        without.sort()
        with.sort()
        print(String(format: "BENCH scoreboard + stage timing per request: median %.2f µs", without[2]))
        print(String(format: "BENCH ... plus metrics (server.metrics on): median %.2f µs (+%.2f µs)", with[2], with[2] - without[2]))
    }

    /// One scrape of `/_kiln/metrics`: every slot added up, the text written; `requests` per worker
    /// since the last scrape, each with a request duration and six stage durations.
    @Test func scrape() throws {
        let workers = 8
        let board = try Scoreboard.create(slots: workers)
        defer { close(board.fd) }
        let metrics = (0..<workers).map { WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: $0)) }
        let stages: [RenderStage: Int64] = [.load: 200_000, .sniff: 50_000, .decode: 5_000_000, .process: 3_000_000,
                                            .encode: 2_000_000, .store: 300_000]
        let clock = ContinuousClock()
        func milliseconds(_ d: Duration) -> Double {
            Double(d.components.seconds) * 1e3 + Double(d.components.attoseconds) / 1e15
        }
        for requests in [0, 100, 1000] {
            let exporter = MetricsExporter()
            var times: [Double] = []
            for _ in 0..<7 {
                for m in metrics {
                    for i in 0..<requests {
                        m.requestFinished(status: 200, bodyBytes: 9_000, cache: .miss, nanoseconds: 11_000_000 + Int64(i) * 1000, stages: stages)
                    }
                }
                times.append(milliseconds(clock.measure {
                    for slot in 0..<workers { exporter.collect(board, slot: slot) }
                    _ = exporter.exposition(busy: 1, idle: workers - 1, uptime: 100, board: board)
                }))
            }
            times.sort()
            print(String(format: "BENCH scrape, %d workers × %d requests since the last: median %.3f ms", workers, requests, times[3]))
        }
    }
}
