import KilnModel
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

    /// Every operation has a processor that runs, and its identifier is the operation's
    /// (one identifier per operation: the processor's is `Operation.identifier`).
    @Test func everyOperationHasARunningProcessor() throws {
        let ops: [Operation] = [
            .resize(ResizeOptions(width: 12, height: 0)), .resize(ResizeOptions(width: 8, height: 8, mode: .fill)),
            .pad(Padding(top: 1, right: 1, bottom: 1, left: 1, background: .white)),
            .rotate(degrees: 180), .rotate(degrees: 270), .flip(.horizontal), .flip(.vertical), .circle(background: .black),
            .crop(CropOptions(width: 10, height: 10, gravity: .smart)), .crop(CropOptions(width: 5, height: 5, x: 1, y: 2)),
            .pad(Padding(top: 1, right: 2, bottom: 3, left: 4)), .circle(background: nil), .circle(background: .white),
            .rounded(radius: 4), .blur(sigma: 1.5), .sharpen(sigma: 1), .grayscale, .sepia, .tint(.black),
            .brightness(10), .contrast(-10), .saturation(20), .rotate(degrees: 90), .flip(.both),
            .extend(ExtendOptions(width: 30, height: 30)), .extend(ExtendOptions(width: 0, height: 40, gravity: .south, background: .white)),
            .trim(TrimOptions(threshold: 10)), .trim(TrimOptions(threshold: 0, color: .white, equalHorizontal: true, equalVertical: true)),
        ]
        let image = PixelStats.photoLike(width: 24, height: 16)
        for op in ops {
            let processor = ProcessorFactory.processor(for: op)
            #expect(processor.identifier == op.identifier)
            #expect(op.identifier.hasPrefix(op.canonical))
            #expect(ProcessorFactory.processors(for: [op]).map(\.identifier) == [op.identifier])
            let out = try processor.process(image, context: PixelStats.context(image))
            #expect(out.pixelCount > 0, "\(op.canonical)")
        }
    }
}

extension ProcessorFactoryTests {
    /// Different operations never share an identifier (the pad colour counts).
    @Test func identifiersTellOperationsApart() {
        let ops: [Operation] = [
            .pad(Padding(top: 1, right: 1, bottom: 1, left: 1)),
            .pad(Padding(top: 1, right: 1, bottom: 1, left: 1, background: .white)),
            .pad(Padding(top: 1, right: 1, bottom: 1, left: 1, background: .black)),
            .circle(background: nil), .circle(background: .white), .tint(.white), .tint(.black),
            .extend(ExtendOptions(width: 9, height: 9)), .extend(ExtendOptions(width: 9, height: 9, background: .white)),
            .extend(ExtendOptions(width: 9, height: 9, gravity: .north)),
        ]
        let identifiers = ops.map { ProcessorFactory.processor(for: $0).identifier }
        #expect(Set(identifiers).count == ops.count)
    }
}
