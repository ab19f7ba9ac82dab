import CoreMetrics
import Glibc
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// The metrics path without processes: worker handlers write cells, the exporter adds slots up
/// and writes the text format (exact lines: `MetricsExpositionTests`).
@Suite struct MetricsTests {
    @Test func everyWorkerSeriesHasItsOwnCellsWithinTheSlot() {
        var cells = Set<Int>()
        for family in MetricCatalog.workerFamilies {
            for value in family.values {
                let first = family.cell(for: value)!
                for c in first..<(first + family.cellsPerSeries) { #expect(cells.insert(c).inserted, "\(family.name) \(value)") }
            }
        }
        #expect(MetricCatalog.cellsUsed == cells.count)
        #expect(MetricCatalog.cellsUsed <= Scoreboard.cellsPerSlot)
        #expect(Set(MetricCatalog.allFamilies.map(\.name)).count == MetricCatalog.allFamilies.count)
        // A typo in a label or dimension counts nowhere.
        #expect(MetricCatalog.cell(label: "kiln_nope_total", dimensions: []) == nil)
        #expect(MetricCatalog.cell(label: MetricCatalog.requests, dimensions: [("class", "6xx")]) == nil)
    }

    @Test func theExporterAddsSlotsAndKeepsWhatExitedWorkersCounted() throws {
        let board = try Scoreboard.create(slots: 4)
        defer { close(board.fd) }
        let exporter = MetricsExporter()
        let a = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 0))
        let b = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
        a.requestFinished(status: 200, bodyBytes: 100, cache: .miss, nanoseconds: 3_000_000, stages: [.decode: 2_000_000])
        b.requestFinished(status: 200, bodyBytes: 50, cache: .hitMemory, nanoseconds: 100_000, stages: [:])
        b.requestFinished(status: 404, bodyBytes: 20, cache: .hitDisk, nanoseconds: 100_000, stages: [:])
        exporter.collect(board, slot: 0)
        exporter.collect(board, slot: 1)
        // The worker in slot 1 exits: last look, then the slot is reset for the next one.
        b.requestFinished(status: 200, bodyBytes: 7, cache: .coalesced, nanoseconds: 2_000_000_000, stages: [.wait: 1_900_000_000])
        exporter.collect(board, slot: 1)
        board.reset(1, pid: 0)
        exporter.forget(slot: 1)
        let c = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
        c.requestFinished(status: 503, bodyBytes: 0, cache: nil, nanoseconds: 1_000, stages: [:])
        exporter.collect(board, slot: 0)
        exporter.collect(board, slot: 1)
        exporter.collect(board, slot: 1)  // looking twice counts nothing twice
        exporter.shedConnections(2)
        exporter.restarted(.crash)
        let text = String(decoding: exporter.exposition(busy: 1, idle: 1, uptime: 5, board: board), as: UTF8.self)
        let lines = Set(text.split(separator: "\n").map(String.init))
        for expected in [
            #"kiln_http_requests_total{class="2xx"} 3"#, #"kiln_http_requests_total{class="4xx"} 1"#,
            #"kiln_http_requests_total{class="5xx"} 3"#, "kiln_requests_shed_total 2", "kiln_renders_total 1",
            #"kiln_cache_requests_total{outcome="miss"} 1"#, #"kiln_cache_requests_total{outcome="hit_memory"} 1"#,
            #"kiln_cache_requests_total{outcome="negative"} 1"#, #"kiln_cache_requests_total{outcome="coalesced"} 1"#,
            "kiln_output_bytes_total 157", "kiln_lock_waits_total 1", "kiln_lock_wait_seconds_total 1.9",
            #"kiln_stage_duration_seconds_count{stage="decode"} 1"#, #"kiln_stage_duration_seconds_bucket{stage="decode",le="0.001"} 0"#,
            #"kiln_stage_duration_seconds_bucket{stage="decode",le="0.0025"} 1"#, "kiln_request_duration_seconds_count 5",
            #"kiln_request_duration_seconds_bucket{le="+Inf"} 5"#, #"kiln_worker_restarts_total{cause="crash"} 1"#,
            #"kiln_workers{state="busy"} 1.0"#,
        ] {
            #expect(lines.contains(expected), "missing \(expected)")
        }
        #expect(exporter.answered == 7 && exporter.shed == 2)
    }

    @Test func aSlotWrittenOverIsNotCountedForever() throws {
        let board = try Scoreboard.create(slots: 2)
        defer { close(board.fd) }
        let exporter = MetricsExporter()
        let requests = try #require(MetricCatalog.family(MetricCatalog.requests)?.cell(for: "2xx"))
        let duration = try #require(MetricCatalog.family(MetricCatalog.requestDuration)?.cell(for: ""))
        // A stray store: a bucket count of 2^63 and a request count beyond Int64.
        board.add(0, cell: duration, 1 << 63)
        board.add(0, cell: requests, UInt64.max - 1)
        let clock = ContinuousClock()
        let took = clock.measure { exporter.collect(board, slot: 0) }
        #expect(took < .seconds(5), "took \(took)")
        let text = String(decoding: exporter.exposition(busy: 0, idle: 1, uptime: 1, board: board), as: UTF8.self)
        #expect(text.contains("kiln_request_duration_seconds_count 0"), "the implausible counts were dropped")
        #expect(text.contains(#"kiln_http_requests_total{class="2xx"} 9223372036854775807"#), "clamped, not a trap")
        // Real counts after it are still recorded.
        let a = WorkerMetrics(factory: ScoreboardMetricsFactory(board: board, slot: 1))
        a.requestFinished(status: 200, bodyBytes: 1, cache: .miss, nanoseconds: 1_000_000, stages: [:])
        exporter.collect(board, slot: 1)
        let after = String(decoding: exporter.exposition(busy: 0, idle: 1, uptime: 1, board: board), as: UTF8.self)
        #expect(after.contains("kiln_request_duration_seconds_count 1"))
    }

    @Test func probeAnswersAreParsed() throws {
        let http = try HealthProbe.parse(Array("HTTP/1.1 200 OK\r\nServer: nginx\r\n\r\nok: 2 of 2\n".utf8))
        #expect(http == HealthProbe.Answer(status: 200, body: "ok: 2 of 2\n"))
        let down = try HealthProbe.parse(Array("HTTP/1.1 503 Service Unavailable\r\n\r\nno worker\n".utf8))
        #expect(down == HealthProbe.Answer(status: 503, body: "no worker\n"))
        #expect(throws: HealthProbe.Failure.self) { try HealthProbe.parse(Array("garbage".utf8)) }
        #expect(throws: HealthProbe.Failure.self) { try HealthProbe.parse(Array("Status: 200\r\n\r\nok\n".utf8)) }
    }
}
