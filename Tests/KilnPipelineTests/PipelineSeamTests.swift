import Testing
import KilnTestSupport
import KilnTestBytes
import KilnModel
@testable import KilnPipeline

/// The pipeline through its seams, every stage but the sniffer a double (KilnTestSupport): what
/// each stage is handed, in which order the observer hears them, and how a stage's failure
/// becomes the request's.
@Suite struct PipelineSeamTests {
    typealias F = CachingFixtures

    /// A 12×8 RGB image, and a PNG of that size for the sniffer and the cost plan to read.
    static let image = PixelBuffer(width: 12, height: 8, channels: 3, pixels: (0..<288).map { UInt8($0 % 251) })
    static let png = TinyPNGWriter.png(width: 12, height: 8, bitDepth: 8, colorType: 2, samples: image.pixels.map(Int.init))

    struct Doubles {
        let files = MemorySource()
        let decoder = StubDecoder(image: PipelineSeamTests.image)
        let processor = RecordingProcessor()
        let encoder = RecordingEncoder()
        let observer: RecordingObserver
        let disk = RecordingDisk()

        init(observer: RecordingObserver = RecordingObserver()) {
            self.observer = observer
            files.put("a.png", PipelineSeamTests.png)
        }

        /// The standard sniffer (libmagic) between the doubles; with the doubles' disk and lock
        /// when `cached`.
        func pipeline(cached: Bool = false) throws -> ImagePipeline {
            var stages = try PipelineStages.standard(source: files)
            stages.decoders = decoder
            stages.processors = processor
            stages.encoders = encoder
            let cache = cached ? RenderCoordinator(memory: MemoryCache(), disk: disk, locks: StandInLock(disk: disk),
                                                   logger: F.quietLogger) : nil
            let pipeline = ImagePipeline(stages: stages, cache: cache)
            pipeline.observer = observer
            return pipeline
        }
    }

    @Test func eachStageGetsWhatThePreviousOneMade() throws {
        let d = Doubles()
        let request = try SpecParser().parse("/w:6/f:webp/a.png", isDecoded: true)
        let result = try d.pipeline().image(for: request, accepted: accepting(nil))
        #expect(result.outcome == .miss && result.format == .webp && result.data == Array("encoded".utf8))
        // Opened once, read through the handle.
        #expect(d.files.opens == 1 && d.files.reads == ["a.png"] && d.files.identityLookups == 0 && d.files.loads == 0)
        // Sniffed as PNG; the header read once, then one decode that may shrink on load to 8×5
        // (6 wide with the 1.25 margin, of 12×8).
        #expect(d.decoder.formatsAsked == [.png] && d.decoder.headerReads == 1)
        #expect(d.decoder.decodes.map(\.minimumSize) == [PixelSize(width: 8, height: 5)])
        // The resize was asked for the request's operation and got the decoded pixels.
        #expect(d.processor.operations == request.operations)
        #expect(d.processor.calls.map(\.image) == [Self.image])
        #expect(d.processor.calls.map(\.context.logicalSize) == [PixelSize(width: 12, height: 8)])
        // The encoder got the processor's output, as WebP.
        #expect(d.encoder.calls.map(\.options.format) == [.webp] && d.encoder.calls.map(\.image) == [Self.image])
        // The observer heard every stage in order, and the reads and writes.
        #expect(d.observer.entries == [.init(.cache), .init(.load), .init(.sniff), .init(.decode),
                                       .init(.process, request.operations[0].identifier), .init(.encode)])
        #expect(d.observer.sourceReads.map(\.format) == [.png] && d.observer.sourceReads.map(\.bytes) == [Self.png.count])
        #expect(d.observer.encodes.map(\.format) == [.webp] && d.observer.encodes.map(\.bytes) == [7])
    }

    @Test func aDecodeFailureIsACorruptImageAndIsRemembered() throws {
        let d = Doubles()
        d.decoder.error = .corrupt("bad Huffman code")
        let pipeline = try d.pipeline(cached: true)
        let request = try SpecParser().parse("/w:6/a.png", isDecoded: true)
        #expect(throws: PipelineFailure(.corrupt, "corrupt image: bad Huffman code", outcome: .miss)) {
            try pipeline.image(for: request, accepted: accepting(nil))
        }
        #expect(throws: PipelineFailure(.corrupt, "corrupt image: bad Huffman code", outcome: .hitMemory)) {
            try pipeline.image(for: request, accepted: accepting(nil))
        }
        #expect(d.decoder.decodes.count == 1 && d.processor.calls.isEmpty && d.encoder.calls.isEmpty)
        #expect(d.disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "disk.store.failure", "release"])
    }

    @Test func aProcessorRefusalIsABadRequestAndNothingIsEncoded() throws {
        let d = Doubles()
        d.processor.error = .invalidArgument(option: "crop", reason: "outside the image")
        let request = try SpecParser().parse("/w:6/a.png", isDecoded: true)
        #expect(throws: PipelineFailure(.invalidRequest, "bad option 'crop': outside the image")) {
            try d.pipeline().image(for: request, accepted: accepting(nil))
        }
        #expect(d.processor.calls.count == 1 && d.encoder.calls.isEmpty && d.observer.encodes.isEmpty)
    }

    /// The observer throws when the client has gone: the render stops before the next stage, and
    /// the failure is not remembered (the next client gets a render).
    @Test func aClientThatLeftStopsTheRenderAtTheNextStage() throws {
        let d = Doubles(observer: .cancelling(at: .decode))
        let pipeline = try d.pipeline(cached: true)
        let request = try SpecParser().parse("/w:6/a.png", isDecoded: true)
        #expect(throws: PipelineFailure(.cancelled, "client went away")) {
            try pipeline.image(for: request, accepted: accepting(nil))
        }
        #expect(d.decoder.headerReads == 1 && d.decoder.decodes.isEmpty && d.encoder.calls.isEmpty)
        #expect(d.observer.stages == [.cache, .wait, .load, .sniff, .decode])
        #expect(d.disk.log == ["disk.entry", "disk.entry", "lock", "disk.entry", "release"] && d.disk.entries.isEmpty)
    }
}
