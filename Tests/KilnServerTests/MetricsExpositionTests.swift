import Glibc
import KilnPipeline
import Testing
@testable import KilnServer

/// `/_kiln/metrics` written straight from the scoreboard's cells: exact lines for a known state.
@Suite struct MetricsExpositionTests {
    /// Three workers' requests, one of them replaced (its slot reset), the master's own counts.
    static func scoreboardState(_ exporters: [(Scoreboard, Int) -> Void], forget: (Int) -> Void) throws -> Scoreboard {
        let board = try Scoreboard.create(slots: 4)
        let a = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 0))
        let b = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
        a.requestFinished(status: 200, bodyBytes: 1000, cache: .miss, nanoseconds: 3_000_000,
                          stages: [.load: 200_000, .decode: 1_500_000, .process: 700_000, .encode: 400_000])
        a.requestFinished(status: 200, bodyBytes: 1000, cache: .hitMemory, nanoseconds: 150_000, stages: [:])
        b.requestFinished(status: 404, bodyBytes: 20, cache: .hitDisk, nanoseconds: 80_000, stages: [:])
        a.sourceRead(.jpeg, bytes: 120_000)
        a.resultEncoded(.webp)
        for collect in exporters { collect(board, 0); collect(board, 1) }
        b.requestFinished(status: 200, bodyBytes: 7, cache: .coalesced, nanoseconds: 2_000_000_000,
                          stages: [.wait: 1_900_000_000, .encode: 12_000_000])
        b.requestFinished(status: 502, bodyBytes: 0, cache: nil, nanoseconds: 12_000_000_000, stages: [.decode: 11_000_000_000])
        // The worker in slot 1 exits: a last look, then its slot is reset for the next one.
        for collect in exporters { collect(board, 1) }
        board.reset(1, pid: 0)
        forget(1)
        let c = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
        c.requestFinished(status: 200, bodyBytes: 50, cache: .miss, nanoseconds: 40_000_000, stages: [.process: 30_000_000])
        for collect in exporters { collect(board, 0); collect(board, 1); collect(board, 1) }
        board.setGlobal(.diskBytes, 123_456)
        board.setGlobal(.diskEntries, 42)
        return board
    }

    static func block(_ text: String, _ family: String) -> String {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        return lines.filter { $0.hasPrefix("# HELP \(family) ") || $0.hasPrefix("# TYPE \(family) ")
            || $0.hasPrefix(family + " ") || $0.hasPrefix(family + "{") || $0.hasPrefix(family + "_bucket")
            || $0.hasPrefix(family + "_sum") || $0.hasPrefix(family + "_count") }.joined(separator: "\n")
    }

    @Test func exactLinesForAKnownState() throws {
        let exporter = MetricsExporter()
        let board = try Self.scoreboardState([exporter.collect], forget: exporter.forget)
        defer { close(board.fd) }
        exporter.shedConnections(2)
        exporter.restarted(.crash)
        exporter.restarted(.reload, count: 3)
        let text = String(decoding: exporter.exposition(busy: 1, idle: 2, uptime: 12.5, board: board), as: UTF8.self)
        #expect(Self.block(text, "kiln_http_requests_total") == """
            # HELP kiln_http_requests_total answers by status class (the master's fast 503s included)
            # TYPE kiln_http_requests_total counter
            kiln_http_requests_total{class="2xx"} 4
            kiln_http_requests_total{class="3xx"} 0
            kiln_http_requests_total{class="4xx"} 1
            kiln_http_requests_total{class="5xx"} 3
            """)
        #expect(Self.block(text, "kiln_request_duration_seconds") == """
            # HELP kiln_request_duration_seconds time in a worker from the request read to the answer written
            # TYPE kiln_request_duration_seconds histogram
            kiln_request_duration_seconds_bucket{le="0.001"} 2
            kiln_request_duration_seconds_bucket{le="0.0025"} 2
            kiln_request_duration_seconds_bucket{le="0.005"} 3
            kiln_request_duration_seconds_bucket{le="0.01"} 3
            kiln_request_duration_seconds_bucket{le="0.025"} 3
            kiln_request_duration_seconds_bucket{le="0.05"} 4
            kiln_request_duration_seconds_bucket{le="0.1"} 4
            kiln_request_duration_seconds_bucket{le="0.25"} 4
            kiln_request_duration_seconds_bucket{le="0.5"} 4
            kiln_request_duration_seconds_bucket{le="1.0"} 4
            kiln_request_duration_seconds_bucket{le="2.5"} 5
            kiln_request_duration_seconds_bucket{le="5.0"} 5
            kiln_request_duration_seconds_bucket{le="10.0"} 5
            kiln_request_duration_seconds_bucket{le="+Inf"} 6
            kiln_request_duration_seconds_sum 14.04323
            kiln_request_duration_seconds_count 6
            """)
        let stages = Self.block(text, "kiln_stage_duration_seconds").split(separator: "\n")
        #expect(stages.count == 2 + 8 * 16)
        #expect(stages.contains(#"kiln_stage_duration_seconds_bucket{stage="decode",le="0.001"} 0"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_bucket{stage="decode",le="0.0025"} 1"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_bucket{stage="decode",le="10.0"} 1"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_bucket{stage="decode",le="+Inf"} 2"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_sum{stage="decode"} 11.0015"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_count{stage="decode"} 2"#))
        #expect(stages.contains(#"kiln_stage_duration_seconds_sum{stage="colour"} 0.0"#))
        #expect(Self.block(text, "kiln_lock_wait_seconds_total") == """
            # HELP kiln_lock_wait_seconds_total time spent in those waits
            # TYPE kiln_lock_wait_seconds_total counter
            kiln_lock_wait_seconds_total 1.9
            """)
        #expect(Self.block(text, "kiln_origin_fetch_seconds_total").hasSuffix("\nkiln_origin_fetch_seconds_total 0"))
        #expect(Self.block(text, "kiln_worker_restarts_total") == """
            # HELP kiln_worker_restarts_total workers replaced, by cause
            # TYPE kiln_worker_restarts_total counter
            kiln_worker_restarts_total{cause="crash"} 1
            kiln_worker_restarts_total{cause="deadline"} 0
            kiln_worker_restarts_total{cause="recycle"} 0
            kiln_worker_restarts_total{cause="reload"} 3
            """)
        #expect(Self.block(text, "kiln_workers") == """
            # HELP kiln_workers workers of the current generation
            # TYPE kiln_workers gauge
            kiln_workers{state="busy"} 1.0
            kiln_workers{state="idle"} 2.0
            """)
        for line in ["kiln_requests_shed_total 2", "kiln_disk_cache_bytes 123456.0", "kiln_disk_cache_entries 42.0",
                     "kiln_uptime_seconds 12.5", "kiln_source_bytes_total 120000", #"kiln_output_formats_total{format="webp"} 1"#,
                     "kiln_output_bytes_total 2057", "kiln_renders_total 2"] {
            #expect(text.split(separator: "\n").contains(Substring(line)), "missing \(line)")
        }
        // Every family once, in the catalog's order, its HELP and TYPE before its samples.
        let heads = text.split(separator: "\n").filter { $0.hasPrefix("# TYPE ") }.map { String($0.split(separator: " ")[2]) }
        #expect(heads == MetricCatalog.allFamilies.map(\.name))
        #expect(text.hasPrefix("# HELP kiln_http_requests_total ") && text.hasSuffix("kiln_uptime_seconds 12.5\n"))
    }

    @Test func labelValuesAndHelpAreEscaped() {
        var text = PrometheusText()
        text.append(PrometheusText.header("x_total", help: #"a \ b"#, type: "counter"))
        text.line(PrometheusText.samplePrefix("x_total", labels: [("path", "a\"b\\c\nd"), ("k", "v")]), UInt64(1234567890))
        text.line(PrometheusText.samplePrefix("y", labels: []), UInt64(0))
        text.line(PrometheusText.samplePrefix("z", labels: []), 0.0307)
        #expect(String(decoding: text.bytes, as: UTF8.self) == """
            # HELP x_total a \\\\ b
            # TYPE x_total counter
            x_total{path="a\\"b\\\\c\\nd",k="v"} 1234567890
            y 0
            z 0.0307

            """)
    }
}
