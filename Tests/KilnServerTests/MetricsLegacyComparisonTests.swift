import Glibc
import Testing
@testable import KilnServer

/// The new exporter against the swift-prometheus one it replaces, on the same scoreboard state:
/// the same families, HELP and TYPE lines, series and values (sums may differ in the last digits:
/// the old one rebuilt them from replayed observations).
@Suite struct MetricsLegacyComparisonTests {
    struct Parsed {
        var comments: Set<String> = []
        var samples: [String: String] = [:]
    }

    static func parse(_ bytes: [UInt8]) -> Parsed {
        var p = Parsed()
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("#") { p.comments.insert(String(line)); continue }
            let cut = line.lastIndex(of: " ")!
            p.samples[String(line[..<cut])] = String(line[line.index(after: cut)...])
        }
        return p
    }

    @Test func theNewExporterWritesWhatTheOldOneWrote() throws {
        let new = MetricsExporter()
        let old = LegacyMetricsExporter()
        let board = try MetricsExpositionTests.scoreboardState([new.collect, old.collect]) {
            new.forget(slot: $0)
            old.forget(slot: $0)
        }
        defer { close(board.fd) }
        for e in [new.shedConnections, old.shedConnections] { e(2) }
        new.restarted(.deadline)
        old.restarted(.deadline)
        let a = Self.parse(new.exposition(busy: 2, idle: 0, uptime: 3.25, board: board))
        let b = Self.parse(old.exposition(busy: 2, idle: 0, uptime: 3.25, board: board))
        #expect(a.comments == b.comments)
        #expect(Set(a.samples.keys) == Set(b.samples.keys))
        #expect(a.samples.count > 150)
        var differing: [String] = []
        for (series, value) in a.samples {
            guard let before = b.samples[series] else { continue }
            if value == before { continue }
            differing.append("\(series): \(before) → \(value)")
            let x = Double(value) ?? .nan, y = Double(before) ?? .nan
            #expect(series.contains("_sum") && abs(x - y) <= 1e-6 * max(1, abs(y)), "\(series): old \(before), new \(value)")
        }
        print("series whose text changed (floating-point sums): \(differing.sorted())")
        #expect(new.answered == old.answered && new.shed == old.shed)
    }
}
