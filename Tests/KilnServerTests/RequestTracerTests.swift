import KilnHTTP
import KilnModel
import KilnTracing
import Synchronization
import Testing

@testable import KilnServer

@Suite struct RequestTracerTests {
    /// Keeps what it is given.
    final class Kept: SpanExporting {
        let traces = Mutex<[[SpanRecord]]>([])
        func submit(_ spans: [SpanRecord]) -> Bool {
            traces.withLock { $0.append(spans) }
            return true
        }
        func shutdown(timeout: Double) {}
    }

    static func request(_ headers: [String: String] = [:]) -> HTTPRequest {
        var r = HTTPRequest(method: "GET", uri: "/w:4/a.png?x=1")
        r.headers = headers
        return r
    }

    @Test func aServerErrorIsAnErrorSpanAndStagesAreItsChildren() throws {
        let kept = Kept()
        let tracer = RequestTracer(exporter: kept, sampler: TraceSampler(ratio: 1), workerSlot: 3)
        let request = Self.request(["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"])
        let trace = try #require(tracer.begin(request, requestID: "ignored"))
        var timeline = Timeline()
        timeline.mark("spec")
        timeline.mark("decode")
        var response = HTTPResponse(status: 500, body: [1, 2, 3])
        response.reason = "decoder crashed"
        response.timeline = timeline
        response.traceFacts["kiln.cache"] = .string("MISS")
        let late = [Timeline.Interval(name: "store.write", start: Timeline.now(), end: Timeline.now() + 1000)]
        tracer.end(trace, request, response, uri: "/w:4/a.png?x=1", bytes: 3, requestID: "r1", answered: Timeline.now(), late: late)

        let spans = try #require(kept.traces.withLock { $0.first })
        #expect(spans.map(\.name) == ["GET", "spec", "decode", "store.write"])
        let root = spans[0]
        #expect(root.kind == .server && root.remoteParent && root.status == .error("decoder crashed"))
        #expect(Hex.lowercase(root.traceID) == "0af7651916cd43dd8448eb211c80319c")
        #expect(root.attributes["url.path"] == .string("/w:4/a.png") && root.attributes["url.query"] == nil)
        #expect(root.attributes["kiln.worker"] == .int(3) && root.attributes["kiln.cache"] == .string("MISS"))
        #expect(root.attributes["http.response.body.size"] == .int(3) && root.attributes["kiln.request_id"] == .string("r1"))
        for child in spans.dropFirst() {
            #expect(child.kind == .internal && child.parentSpanID == root.spanID && child.traceID == root.traceID)
            #expect(!child.remoteParent && child.status == .unset)
        }
        #expect(spans[1].start >= root.start && spans[2].end <= root.end)
    }

    @Test func anUnsampledRequestRecordsNothing() {
        let kept = Kept()
        let tracer = RequestTracer(exporter: kept, sampler: TraceSampler(ratio: 0), workerSlot: nil)
        #expect(tracer.begin(Self.request(), requestID: "0af7651916cd43dd8448eb211c80319c") == nil)
        #expect(tracer.begin(Self.request(["traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"]),
                             requestID: "x") == nil)
    }
}
