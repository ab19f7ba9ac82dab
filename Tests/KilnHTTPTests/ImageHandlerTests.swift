import Logging
import Testing
import KilnModel
import KilnPipeline
@testable import KilnHTTP

/// `ImageHandler` in front of a stand-in pipeline (`ImageProviding`): what it asks of the pipeline
/// and how it turns results and failures into answers, without a decoder or a file.
@Suite struct ImageHandlerTests {
    /// Answers every request with `answer`, or throws `failure`; records what it was asked.
    final class StandIn: ImageProviding {
        var observer: (any RenderObserving)?
        var output = OutputConfiguration()
        var answer = PipelineResult(image: CachedImage(data: Array("image bytes".utf8), format: .webp, digest: String(repeating: "ab", count: 16),
                                                       sourceModified: 1_700_000_000, sourcePath: "cat.jpg"),
                                    outcome: .miss, timeline: Timeline())
        var failure: PipelineFailure?
        var asked: [(canonical: String, accepted: [ImageFormat])] = []
        var began = 0, after = 0

        func requestBegan() { began += 1 }
        func image(for request: ImageRequest, accepted: FormatNegotiation) throws(PipelineFailure) -> PipelineResult {
            asked.append((request.canonical, accepted.formats))
            if let failure { throw failure }
            return answer
        }
        func image(for request: ImageRequest, accepted: FormatNegotiation, substitute: SubstituteImage) throws(PipelineFailure) -> PipelineResult {
            try image(for: request, accepted: accepted)
        }
        func afterResponse() -> SweepStats? { after += 1; return nil }
        func finish(timeout: Double) -> SweepStats? { nil }
    }

    final class Ears: RenderObserving {
        func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure) {}
    }

    static func handler(_ pipeline: StandIn) -> ImageHandler {
        ImageHandler(pipeline: pipeline, parser: SpecParser(), http: HTTPConfiguration(), logger: Logger(label: "test"))
    }

    @Test func aResultBecomesAnAnswerWithItsHeaders() {
        let pipeline = StandIn()
        let handler = Self.handler(pipeline)
        let ears = Ears()
        handler.observe(with: ears)
        #expect(pipeline.observer === ears)
        let r = handler.handle(HTTPRequest(method: "GET", uri: "/w:300/f:auto/cat.jpg", headers: ["accept": "image/webp,*/*"]))
        #expect(r.status == 200 && r.body == Array("image bytes".utf8))
        #expect(r.header("Content-Type") == "image/webp" && r.header("Content-Length") == "11")
        #expect(r.header("ETag") == "\"\(String(repeating: "ab", count: 16))\"")
        #expect(r.header("Last-Modified") == "Tue, 14 Nov 2023 22:13:20 GMT")
        #expect(r.header("Vary") == "Accept" && r.header("X-Cache") == "MISS")
        #expect(r.header("Cache-Control")?.contains("max-age=") == true)
        // The pipeline was asked once, for the canonical request and the client's formats.
        #expect(pipeline.began == 1 && pipeline.asked.count == 1)
        #expect(pipeline.asked.first?.canonical == "rs:300:0:fit/f:auto/-/cat.jpg" && pipeline.asked.first?.accepted.contains(.webp) == true)
        handler.afterResponse()
        #expect(pipeline.after == 1)
        // The same ETag again: a 304 without a body, the pipeline asked again for its variant.
        let again = handler.handle(HTTPRequest(method: "GET", uri: "/w:300/f:auto/cat.jpg",
                                               headers: ["accept": "image/webp,*/*", "if-none-match": r.header("ETag") ?? ""]))
        #expect(again.status == 304 && again.body.isEmpty && again.header("ETag") == r.header("ETag"))
    }

    @Test(arguments: [
        (PipelineFailure.Kind.notFound, 404), (.tooLarge, 413), (.unsupported, 415), (.corrupt, 422), (.busy, 503),
    ])
    func aFailureIsItsStatusWithAOneLineReason(kind: PipelineFailure.Kind, status: Int) {
        let pipeline = StandIn()
        pipeline.failure = PipelineFailure(kind, "the reason\nwith a second line")
        let r = Self.handler(pipeline).handle(HTTPRequest(method: "GET", uri: "/w:300/cat.jpg"))
        #expect(r.status == status)
        let text = String(decoding: r.body, as: UTF8.self)
        #expect(text.hasSuffix("\n") && text.dropLast().contains("\n") == false, "\(text.debugDescription)")
        #expect(r.header("ETag") == nil)
    }

    @Test func aBadSpecNeverReachesThePipeline() {
        let pipeline = StandIn()
        let r = Self.handler(pipeline).handle(HTTPRequest(method: "GET", uri: "/w:-5/cat.jpg"))
        #expect(r.status == 400 && pipeline.asked.isEmpty)
    }
}
