import KilnModel
import KilnPOSIX
import Logging
import Synchronization
import Testing

@testable import KilnTracing

@Suite struct SpanExporterTests {
    /// A collector that records the bodies it got, and can hang until released.
    final class Collector: Sendable {
        let bodies = Mutex<[[UInt8]]>([])
        let hanging = Mutex(false)
        let entered = Mutex(0)

        var post: SpanExporter.Post {
            { body in
                self.entered.withLock { $0 += 1 }
                while self.hanging.withLock({ $0 }) { Sleep.milliseconds(2) }
                self.bodies.withLock { $0.append(body) }
                return .success(200)
            }
        }
    }

    static func spans(_ n: Int) -> [SpanRecord] {
        (0..<n).map { i in
            SpanRecord(traceID: [UInt8](repeating: 1, count: 16), spanID: [UInt8](repeating: UInt8(i & 0xFF), count: 8),
                       name: "s\(i)", kind: .internal, start: 1, end: 2)
        }
    }

    static func waitUntil(_ seconds: Double = 20, _ done: () -> Bool) -> Bool {
        let deadline = MonotonicClock.seconds() + seconds
        while !done() {
            if MonotonicClock.seconds() > deadline { return false }
            Sleep.milliseconds(2)
        }
        return true
    }

    static func exporter(capacity: Int, interval: Double, post: @escaping SpanExporter.Post,
                         report: @escaping @Sendable (SpanExporter.Counts) -> Void = { _ in }) throws -> SpanExporter {
        try #require(SpanExporter(capacity: capacity, interval: interval, resource: TraceFacts(), logger: Logger(label: "test"),
                                  post: post, report: report))
    }

    @Test func queuedSpansAreSentInBatchesAndCounted() throws {
        let collector = Collector()
        let exporter = try Self.exporter(capacity: 4096, interval: 0.05, post: collector.post)
        #expect(exporter.startThread())
        #expect(exporter.submit(Self.spans(700)))
        #expect(exporter.submit(Self.spans(3)))
        #expect(Self.waitUntil { exporter.counts.exported == 703 })
        let sizes = collector.bodies.withLock { $0.count }
        #expect(sizes >= 2)  // 703 spans: at most 512 a request
        exporter.shutdown(timeout: 5)
        #expect(exporter.counts.dropped == 0 && exporter.counts.failed == 0)
    }

    @Test func aHangingCollectorNeverBlocksSubmitAndFullQueuesDropWholeTraces() throws {
        let collector = Collector()
        collector.hanging.withLock { $0 = true }
        let reported = Mutex(SpanExporter.Counts())
        let exporter = try Self.exporter(capacity: 32, interval: 0.01, post: collector.post) { c in
            reported.withLock { $0.exported += c.exported; $0.dropped += c.dropped }
        }
        #expect(exporter.startThread())
        #expect(exporter.submit(Self.spans(10)))
        // The thread took the first batch and hangs in its POST.
        #expect(Self.waitUntil { collector.entered.withLock { $0 } == 1 })
        // 32 more fit in the queue; the next trace does not, whole (nothing of it is kept).
        #expect(exporter.submit(Self.spans(20)))
        #expect(exporter.submit(Self.spans(12)))
        #expect(!exporter.submit(Self.spans(5)))
        #expect(!exporter.submit(Self.spans(1)))
        #expect(exporter.counts.dropped == 6)
        #expect(reported.withLock { $0.dropped } == 6)
        // Shutting down while the collector hangs returns within its bound.
        let before = MonotonicClock.seconds()
        exporter.shutdown(timeout: 0.2)
        #expect(MonotonicClock.seconds() - before < 10)
        // Released, the thread sends what it holds and stops.
        collector.hanging.withLock { $0 = false }
        #expect(Self.waitUntil { exporter.counts.exported == 42 })
        #expect(!exporter.submit(Self.spans(1)))  // stopped: dropped
    }

    @Test func failedExportsAreCountedNotRetried() throws {
        let exporter = try Self.exporter(capacity: 64, interval: 0.01, post: { _ in .success(503) })
        #expect(exporter.startThread())
        exporter.submit(Self.spans(7))
        #expect(Self.waitUntil { exporter.counts.failed == 7 })
        exporter.shutdown(timeout: 5)
        #expect(exporter.counts.exported == 0)
    }
}
