import KilnModel
import KilnPipeline
import Testing
@testable import KilnHTTP

@Suite struct FallbackImagesTests {
    func failure(_ kind: PipelineFailure.Kind) -> PipelineFailure {
        PipelineFailure(kind, "x")
    }

    @Test func classesPickTheirFiles() throws {
        var c = FallbackConfiguration()
        c.image = "/f/any.png"
        var images = c.images
        #expect(images.substitute(for: failure(.notFound))?.1 == SubstituteImage(name: "not-found", path: "/f/any.png"))
        #expect(images.substitute(for: failure(.corrupt))?.0 == .broken)
        #expect(images.substitute(for: failure(.unsupported))?.1.path == "/f/any.png")
        // Origins are opt-in; other failures never fall back.
        for kind in [PipelineFailure.Kind.sourceUnavailable, .sourceTimedOut, .invalidRequest, .forbidden, .tooLarge, .internal, .busy, .cancelled] {
            #expect(images.substitute(for: failure(kind)) == nil, "\(kind)")
        }
        #expect(images.substitute(for: SpecError.missingSourcePath) == nil)
        #expect(images.status(failed: 404) == 404 && images.cacheControl == "public, max-age=60")

        c.notFound = "/f/nf.png"
        c.originErrors = "/f/origin.png"
        c.status = .ok
        c.maxAge = 0
        images = c.images
        #expect(images.substitute(for: failure(.notFound))?.1.path == "/f/nf.png")
        #expect(images.substitute(for: failure(.corrupt))?.1.path == "/f/any.png")
        #expect(images.substitute(for: failure(.sourceTimedOut))?.0 == .originError)
        #expect(images.status(failed: 404) == 200 && images.cacheControl == "no-store")
        #expect(FallbackConfiguration().images == FallbackImages())
    }

    @Test func substituteKeyPathsAreNoURLPath() throws {
        let s = SubstituteImage(name: "not-found", path: "/etc/kiln/p.png")
        #expect(s.keyPath.hasPrefix("/"))
        // Whatever a URL says, the parser never gives a source path with a leading slash.
        for url in ["/substitute/not-found", "//substitute/not-found", "/-//substitute/not-found", "/-/%2Fsubstitute/not-found"] {
            if let r = try? SpecParser().parse(url) { #expect(r.sourcePath != s.keyPath, "\(url)") }
        }
    }
}
