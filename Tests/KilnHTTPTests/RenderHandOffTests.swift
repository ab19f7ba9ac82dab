import KilnPipeline
import Testing
@testable import KilnHTTP

/// A lookup lane's hand-off (`RenderHandOff`): the internal location, the path nginx resolved
/// percent-encoded again (nginx decodes it back into the same `DOCUMENT_URI`), the query kept.
@Suite struct RenderHandOffTests {
    func target(_ request: HTTPRequest) -> String? {
        RenderHandOff.response(for: request).headers.first { $0.0 == HeaderName.xAccelRedirect }?.1
    }

    @Test func handsTheResolvedPathToTheRenderLocation() {
        let plain = HTTPRequest(method: "GET", uri: "/w:300/my%20cat.jpg?auto=format", documentURI: "/w:300/my cat.jpg")
        #expect(target(plain) == "/_kiln_render/w%3A300/my%20cat.jpg?auto=format")
        let trusted = HTTPRequest(method: "GET", uri: "/thumb/20x20/a.jpg", documentURI: "/rs:20:20:fill/-/a.jpg", isTrusted: true)
        #expect(target(trusted) == "/_kiln_render_trusted/rs%3A20%3A20%3Afill/-/a.jpg")
        // Without nginx's DOCUMENT_URI: the raw path as sent.
        #expect(target(HTTPRequest(method: "GET", uri: "/w:10/b.jpg")) == "/_kiln_render/w%3A10/b.jpg")
        let response = RenderHandOff.response(for: plain)
        #expect(response.status == 200 && response.body.isEmpty)
    }

    @Test func onlyTheLanesMissIsAHandOff() {
        #expect(RenderHandOff.isHandOff(PipelineFailure(.renderElsewhere, "x")))
        #expect(!RenderHandOff.isHandOff(PipelineFailure(.notFound, "x")))
    }
}
