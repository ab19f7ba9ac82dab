import Testing
import KilnModel
import KilnPipeline
@testable import KilnHTTP

@Suite struct ErrorMappingTests {
    @Test func everyKindHasOneStatus() {
        let statuses = PipelineFailure.Kind.allCases.map { ErrorMapping.status(of: $0) }
        #expect(statuses == [400, 403, 404, 413, 415, 422, 500, 499, 502, 504, 503, 503])
        #expect(ErrorMapping.status(of: RequestRefusal.expired("x")) == 410)
    }

    @Test func freshAndRememberedFailuresMapAlike() {
        let fresh = ErrorMapping.map(DecodeError.corrupt("premature end"))
        let remembered = ErrorMapping.map(PipelineFailure(.corrupt, "corrupt image: premature end", outcome: .hitDisk))
        #expect(fresh.status == 422 && remembered.status == 422 && fresh.message == remembered.message)
        #expect(remembered.outcome == .hitDisk && fresh.outcome == nil)
        #expect(ErrorMapping.map(SpecError.forbiddenPath(reason: "x")).status == 403)
        #expect(ErrorMapping.map(SpecError.unknownOption(segment: "zz:1")).status == 400)
        #expect(ErrorMapping.map(LoadError.notFound("no source at a")).status == 404)
        #expect(ErrorMapping.map(PipelineError.unsupportedType("text/plain")).status == 415)
        #expect(ErrorMapping.map(ProcessingError.overLimit("big")).status == 413)
        // Kiln's own capacity is a 503, never remembered (the next request may find a worker).
        let busy = PipelineFailure(LoadError.busy("every worker allowed to fetch is fetching"))
        #expect(ErrorMapping.map(busy).status == 503 && !busy.kind.isRememberable)
    }

    /// A 500 sends a fixed sentence; the library text goes to the log only.
    @Test func internalErrorsNeverSendLibraryText() {
        struct Odd: Error {}
        let cases: [(any Error, String)] = [
            (EncodeError.failed("libwebp: VP8_ENC_ERROR_OUT_OF_MEMORY"), PipelineFailure.encodeFailed),
            (LoadError.io("EIO at /srv/images/secret/a.jpg"), PipelineFailure.readFailed),
            (Odd(), PipelineFailure.internalError),
        ]
        for (error, sentence) in cases {
            let mapped = ErrorMapping.map(error)
            #expect(mapped.status == 500 && mapped.message == sentence)
            #expect(!mapped.message.contains("libwebp") && !mapped.message.contains("/srv"))
            #expect(mapped.logMessage != mapped.message)
        }
        #expect(ErrorMapping.map(EncodeError.failed("libwebp: oops")).logMessage.contains("libwebp: oops"))
    }
}
