import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct ResizeTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var source: PixelSize
        var options: ResizeOptions
        var expected: PixelSize
        var testDescription: String {
            "\(source) rs:\(options.width):\(options.height):\(options.mode)\(options.enlarge ? " enlarge" : "") → \(expected)"
        }
    }

    static func size(_ w: Int, _ h: Int) -> PixelSize { PixelSize(width: w, height: h) }
    static func rs(_ w: Int, _ h: Int, _ mode: ResizeMode, enlarge: Bool = false) -> ResizeOptions {
        ResizeOptions(width: w, height: h, mode: mode, enlarge: enlarge)
    }

    static let cases: [Case] = [
        Case(source: size(4000, 3000), options: rs(300, 300, .fit), expected: size(300, 225)),
        Case(source: size(4000, 3000), options: rs(300, 200, .fill), expected: size(300, 200)),
        Case(source: size(4000, 3000), options: rs(100, 100, .force), expected: size(100, 100)),
        Case(source: size(4000, 3000), options: rs(8000, 8000, .fit), expected: size(4000, 3000)),
        Case(source: size(4000, 3000), options: rs(8000, 8000, .fit, enlarge: true), expected: size(8000, 6000)),
        Case(source: size(4000, 3000), options: rs(300, 0, .fit), expected: size(300, 225)),
        Case(source: size(4000, 3000), options: rs(0, 300, .fit), expected: size(400, 300)),
        Case(source: size(4000, 3000), options: rs(0, 0, .fit), expected: size(4000, 3000)),
        Case(source: size(4000, 3000), options: rs(0, 200, .fill), expected: size(267, 200)),
        Case(source: size(3000, 4000), options: rs(300, 300, .fit), expected: size(225, 300)),
        Case(source: size(3000, 4000), options: rs(300, 200, .fill), expected: size(300, 200)),
        Case(source: size(1920, 1080), options: rs(800, 800, .fit), expected: size(800, 450)),
        Case(source: size(1920, 1080), options: rs(400, 400, .fill), expected: size(400, 400)),
        Case(source: size(1920, 1080), options: rs(800, 0, .force), expected: size(800, 450)),
        Case(source: size(1920, 1080), options: rs(800, 100, .force), expected: size(800, 100)),
        Case(source: size(100, 50), options: rs(300, 300, .fill), expected: size(100, 50)),
        Case(source: size(100, 50), options: rs(300, 300, .fill, enlarge: true), expected: size(300, 300)),
        Case(source: size(100, 50), options: rs(300, 300, .force), expected: size(100, 50)),
        Case(source: size(100, 50), options: rs(300, 300, .force, enlarge: true), expected: size(300, 300)),
        Case(source: size(100, 50), options: rs(60, 60, .fill), expected: size(60, 50)),
        Case(source: size(1, 1), options: rs(300, 300, .fit), expected: size(1, 1)),
        Case(source: size(7, 5), options: rs(3, 3, .fill), expected: size(3, 3)),
        Case(source: size(640, 480), options: rs(0, 0, .force), expected: size(640, 480)),
    ]

    @Test(arguments: cases)
    func planGeometry(_ c: Case) {
        let plan = Resize(c.options).plan(for: c.source, logicalSize: c.source)
        #expect(plan.output == c.expected)
        // The source rectangle stays inside the source and keeps the output's aspect ratio
        // (except force, which stretches).
        #expect(plan.sourceX >= 0 && plan.sourceY >= 0)
        #expect(plan.sourceX + plan.sourceWidth <= Double(c.source.width) + 1e-9)
        #expect(plan.sourceY + plan.sourceHeight <= Double(c.source.height) + 1e-9)
    }

    /// The processed image has the planned size: run on the input a decoder shrunk by 8 on load
    /// when the source is large (the pipeline's case), on the source itself when it is small.
    @Test(arguments: cases.filter { $0.expected.pixelCount <= 400_000 })
    func processedGeometry(_ c: Case) throws {
        let shrink = c.source.width >= 1000 ? 8 : 1
        let input = TestImages.noise(width: (c.source.width + shrink - 1) / shrink,
                                     height: (c.source.height + shrink - 1) / shrink, channels: 3)
        let context = ProcessingContext(logicalSize: c.source)
        let output = try Resize(c.options).process(input, context: context)
        #expect(output.size == c.expected)
        #expect(output.channels == 3)
    }

    @Test func logicalSizeMapsToDecodedPixels() throws {
        let input = TestImages.constant(width: 500, height: 375, [10, 20, 30])
        let context = ProcessingContext(logicalSize: PixelSize(width: 4000, height: 3000))
        let output = try Resize(width: 300, height: 300).process(input, context: context)
        #expect(output.size == PixelSize(width: 300, height: 225))
        let plan = Resize(width: 300, height: 300).plan(for: input.size, logicalSize: context.logicalSize)
        #expect(plan.sourceWidth == 500 && plan.sourceHeight == 375)
    }

    /// A fill crop planned on the logical size lands on the same content in the shrunk input:
    /// 4000×3000 fill 300×300 keeps logical x 500..<3500, which is input x 62.5..<437.5.
    @Test func logicalFillCropLandsOnTheSameContent() throws {
        let input = TestImages.rgb(width: 500, height: 375) { x, y in
            (Double(x) * 255 / 499, Double(y) * 255 / 374, 0)
        }
        let context = ProcessingContext(logicalSize: PixelSize(width: 4000, height: 3000))
        let output = try Resize(width: 300, height: 300, mode: .fill).process(input, context: context)
        #expect(output.size == PixelSize(width: 300, height: 300))
        for i in stride(from: 10, to: 290, by: 7) {
            let centre = 62.5 + (Double(i) + 0.5) * 1.25          // in input pixels
            let expectedR = (centre - 0.5) * 255 / 499
            let expectedG = (Double(i) + 0.5) * 1.25 - 0.5         // rows: the whole height, 375/300
            let p = output.pixel(x: i, y: i)
            #expect(abs(Double(p[0]) - expectedR) <= 1.0, "R at \(i)")
            #expect(abs(Double(p[1]) - expectedG * 255 / 374) <= 1.0, "G at \(i)")
        }
    }

    @Test func overLimitIsRefusedBeforeResampling() {
        let input = TestImages.constant(width: 40, height: 30, [1, 2, 3])
        let context = ProcessingContext(logicalSize: PixelSize(width: 4000, height: 3000),
                                        maxOutputPixels: 40_000_000)
        let resize = Resize(width: 8000, height: 8000, mode: .fit, enlarge: true)
        #expect(throws: ProcessingError.self) { try resize.process(input, context: context) }
        do {
            _ = try resize.process(input, context: context)
        } catch {
            guard case .overLimit = error else {
                Issue.record("expected overLimit, got \(error)")
                return
            }
        }
        // Exactly at the limit is allowed (checked on a small case).
        let small = ProcessingContext(logicalSize: input.size, maxOutputPixels: 20 * 15)
        #expect((try? Resize(width: 20, height: 15).process(input, context: small))?.size
                == PixelSize(width: 20, height: 15))
        let tooSmall = ProcessingContext(logicalSize: input.size, maxOutputPixels: 20 * 15 - 1)
        #expect(throws: ProcessingError.self) { try Resize(width: 20, height: 15).process(input, context: tooSmall) }
    }

    @Test func identityPlanReturnsTheInputUnchanged() throws {
        let input = TestImages.noise(width: 400, height: 300, channels: 4)
        let context = ProcessingContext(logicalSize: input.size)
        let output = try Resize(width: 8000, height: 8000).process(input, context: context)
        #expect(output == input)
        let same = try Resize(width: 400, height: 300, mode: .force).process(input, context: context)
        #expect(same == input)
    }

    @Test func negativeSizeIsAnInvalidArgument() {
        let input = TestImages.constant(width: 4, height: 4, [0, 0, 0])
        #expect(throws: ProcessingError.invalidArgument(option: "rs", reason: "width and height must not be negative")) {
            try Resize(width: -1, height: 10).process(input, context: ProcessingContext(logicalSize: input.size))
        }
    }

    @Test func identifierIsTheCanonicalOperation() {
        #expect(Resize(width: 300, height: 200, mode: .fill).identifier == "rs:300:200:fill")
        #expect(Resize(width: 0, height: 120).identifier == "rs:0:120:fit")
        let options = ResizeOptions(width: 64, height: 48, mode: .force, enlarge: true)
        #expect(Resize(options).identifier == Operation.resize(options).canonical)
    }
}
