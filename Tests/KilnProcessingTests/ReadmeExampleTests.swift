import Testing
import KilnModel
import KilnProcessing

// The custom processor example of docs/url-api.md (Processors), verbatim between the markers: it
// must compile and work, and the page must still show it.
// DOCS-EXAMPLE-BEGIN
struct Invert: ImageProcessing {
    var identifier: String { "invert" }   // spell out every argument: it goes into the cache key
    func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        var out = Alpha.unpremultiplied(image)
        for i in out.pixels.indices where !(out.hasAlpha && i % 4 == 3) { out.pixels[i] = 255 - out.pixels[i] }
        return out
    }
}
// DOCS-EXAMPLE-END

@Suite struct ReadmeExampleTests {
    @Test func theReadmeProcessorRegistersAndRuns() throws {
        var registry = ProcessorRegistry()
        registry.register("invert") { _ in Invert() }
        let request = try SpecParser(customResolver: registry.resolver).parse("/invert/a.jpg")
        #expect(request.canonical == "invert/-/a.jpg")
        let image = PixelBuffer(width: 1, height: 1, channels: 4, pixels: [10, 20, 30, 200])
        let out = try ProcessorFactory(registry: registry).processor(for: request.operations[0])
            .process(image, context: ProcessingContext(logicalSize: image.size))
        #expect(out.pixels == [245, 235, 225, 200])
    }
}

import Foundation

extension ReadmeExampleTests {
    @Test func theReadmeShowsThisExample() throws {
        let here = URL(fileURLWithPath: #filePath)
        let test = try String(contentsOf: here, encoding: .utf8)
        let page = try String(contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../docs/url-api.md"), encoding: .utf8)
        let begin = try #require(test.range(of: "// DOCS-EXAMPLE-BEGIN\n"))
        let end = try #require(test.range(of: "// DOCS-EXAMPLE-END"))
        let example = String(test[begin.upperBound..<end.lowerBound])
        #expect(example.split(separator: "\n").count <= 10)
        #expect(page.contains(example))
    }
}
