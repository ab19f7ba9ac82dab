import KilnCore
import Testing
@testable import KilnProcessing

@Suite struct ProcessorFactoryTests {
    @Test func resizeOperationBecomesAResize() throws {
        let options = ResizeOptions(width: 30, height: 20, mode: .fill)
        let processor = ProcessorFactory.processor(for: .resize(options))
        #expect((processor as? Resize)?.options == options)
        #expect(processor.identifier == "rs:30:20:fill")
        let input = TestImages.noise(width: 90, height: 90, channels: 3)
        let output = try processor.process(input, context: ProcessingContext(logicalSize: input.size))
        #expect(output.size == PixelSize(width: 30, height: 20))
    }

    @Test func operationsKeepTheirOrder() {
        let ops: [Operation] = [.resize(ResizeOptions(width: 10, height: 0)),
                                .resize(ResizeOptions(width: 0, height: 5, mode: .force))]
        #expect(ProcessorFactory.processors(for: ops).map(\.identifier) == ["rs:10:0:fit", "rs:0:5:force"])
    }
}
