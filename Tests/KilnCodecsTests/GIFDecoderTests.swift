import KilnModel
@testable import KilnCodecs
import Testing
import KilnTestBytes

@Suite struct GIFDecoderTests {
    static let red: (UInt8, UInt8, UInt8) = (255, 0, 0)
    static let green: (UInt8, UInt8, UInt8) = (0, 255, 0)
    static let blue: (UInt8, UInt8, UInt8) = (0, 0, 255)
    static let white: (UInt8, UInt8, UInt8) = (255, 255, 255)

    /// A 4x4 canvas: f0 red everywhere (keep); f1 blue 2x2 at 1,1 (restore to previous);
    /// f2 a 2x2 at 2,2 whose corners are the transparent index 3 and the rest green (restore to
    /// background); f3 a white 1x1 at 0,0 from a local palette.
    static func disposalFile(loop: Int? = 2) -> [UInt8] {
        var gif = TinyGIFWriter(width: 4, height: 4, palette: [red, green, blue, white], loopCount: loop)
        gif.frames = [
            .init(width: 4, height: 4, indices: [UInt8](repeating: 0, count: 16), disposal: 1, delay: 10),
            .init(left: 1, top: 1, width: 2, height: 2, indices: [2, 2, 2, 2], disposal: 3, delay: 20),
            .init(left: 2, top: 2, width: 2, height: 2, indices: [3, 1, 1, 3], disposal: 2, transparentIndex: 3, delay: 0),
            .init(width: 1, height: 1, indices: [1], localPalette: [red, white]),
        ]
        return gif.bytes()
    }

    static func frames(_ data: [UInt8]) throws -> [AnimationFrame] {
        var frames: [AnimationFrame] = []
        try GIFDecoder().decodeFrames(data) { frame in
            frames.append(frame)
            return true
        }
        return frames
    }

    static func rgba(_ b: PixelBuffer, _ x: Int, _ y: Int) -> [UInt8] {
        let o = (y * b.width + x) * b.channels
        return Array(b.pixels[o..<o + b.channels])
    }

    @Test func structureFromTheBlocksAlone() throws {
        let info = try GIFDecoder().readAnimation(Self.disposalFile())
        #expect(info.canvas == PixelSize(width: 4, height: 4))
        #expect(info.frameCount == 4)
        #expect(info.loopCount == 3)   // NETSCAPE 2 repetitions = 3 plays
        #expect(info.hasAlpha)
        #expect(info.storedPixels == 16 + 4 + 4 + 1)
        #expect(try GIFDecoder().readAnimation(Self.disposalFile(loop: 0)).loopCount == 0)
        #expect(try GIFDecoder().readAnimation(Self.disposalFile(loop: nil)).loopCount == 1)
        let header = try GIFDecoder().readHeader(Self.disposalFile())
        #expect(header.format == .gif && header.frameCount == 4 && header.width == 4)
    }

    @Test func disposalTransparencyOffsetsAndLocalPalettes() throws {
        let frames = try Self.frames(Self.disposalFile())
        #expect(frames.count == 4)
        #expect(frames.map(\.durationMilliseconds) == [100, 200, 0, 0])
        let red: [UInt8] = [255, 0, 0, 255], blue: [UInt8] = [0, 0, 255, 255], green: [UInt8] = [0, 255, 0, 255]
        let clear: [UInt8] = [0, 0, 0, 0], white: [UInt8] = [255, 255, 255, 255]
        let f0 = frames[0].buffer, f1 = frames[1].buffer, f2 = frames[2].buffer, f3 = frames[3].buffer
        #expect(f0.channels == 4 && f0.width == 4 && f0.height == 4)
        #expect((0..<16).allSatisfy { Self.rgba(f0, $0 % 4, $0 / 4) == red })
        #expect(Self.rgba(f1, 1, 1) == blue && Self.rgba(f1, 2, 2) == blue && Self.rgba(f1, 0, 0) == red && Self.rgba(f1, 3, 3) == red)
        // f1 restored to previous: red under f2's transparent corners; f2's green drawn.
        #expect(Self.rgba(f2, 1, 1) == red && Self.rgba(f2, 2, 2) == red && Self.rgba(f2, 3, 3) == red)
        #expect(Self.rgba(f2, 3, 2) == green && Self.rgba(f2, 2, 3) == green)
        // f2 restored to background: its whole rectangle is cleared; f3 from its local palette.
        #expect(Self.rgba(f3, 2, 2) == clear && Self.rgba(f3, 3, 2) == clear && Self.rgba(f3, 3, 3) == clear)
        #expect(Self.rgba(f3, 0, 0) == white && Self.rgba(f3, 1, 1) == red)
    }

    @Test func interlacedRowsArePutInPlace() throws {
        var gif = TinyGIFWriter(width: 1, height: 11, palette: [Self.red, Self.green, Self.blue, Self.white])
        let indices: [UInt8] = (0..<11).map { UInt8($0 % 4) }
        gif.frames = [.init(width: 1, height: 11, indices: indices, interlaced: true)]
        let frames = try Self.frames(gif.bytes())
        #expect(frames.count == 1)
        let image = frames[0].buffer
        #expect(image.channels == 3)   // opaque: RGB
        let palette: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
        #expect((0..<11).allSatisfy { Self.rgba(image, 0, $0) == palette[Int(indices[$0])] })
        #expect((0..<11).map { GIFCompositor.interlacedRow($0, height: 11) } == [0, 8, 4, 2, 6, 10, 1, 3, 5, 7, 9])
    }

    @Test func framesLargerThanTheCanvasAreClipped() throws {
        var gif = TinyGIFWriter(width: 2, height: 2, palette: [Self.red, Self.green])
        gif.frames = [.init(left: 1, top: 1, width: 3, height: 3, indices: [UInt8](repeating: 1, count: 9))]
        let frame = try Self.frames(gif.bytes())[0].buffer
        #expect(frame.width == 2 && frame.height == 2)
        #expect(Self.rgba(frame, 1, 1) == [0, 255, 0, 255] && Self.rgba(frame, 0, 0) == [0, 0, 0, 0])
    }

    @Test func rowsBelowTheCanvasAreSkippedAndPriced() throws {
        // A 2x2 canvas, a 3x6 frame at 0,1 (rows 1...5 of it below the canvas), then a frame
        // after it: the skipped rows must leave the decoder at the next frame.
        var gif = TinyGIFWriter(width: 2, height: 2, palette: [Self.red, Self.green, Self.blue])
        gif.frames = [
            .init(top: 1, width: 3, height: 6, indices: [UInt8](repeating: 1, count: 18)),
            .init(width: 1, height: 1, indices: [2]),
            .init(width: 4, height: 4, indices: [UInt8](repeating: 0, count: 16), interlaced: true),
        ]
        let info = try GIFDecoder().readAnimation(gif.bytes())
        #expect(info.decodedPixels == [3 * 1, 1, 16])   // clipped rows; interlaced frames whole
        let frames = try Self.frames(gif.bytes())
        #expect(frames.count == 3)
        #expect(Self.rgba(frames[0].buffer, 0, 1) == [0, 255, 0, 255] && Self.rgba(frames[0].buffer, 0, 0) == [0, 0, 0, 0])
        #expect(Self.rgba(frames[1].buffer, 0, 0) == [0, 0, 255, 255] && Self.rgba(frames[1].buffer, 1, 1) == [0, 255, 0, 255])
        #expect(Self.rgba(frames[2].buffer, 1, 1) == [255, 0, 0, 255])
        // A frame wholly below the canvas decodes nothing and is skipped whole.
        gif.frames = [.init(top: 5, width: 2, height: 2, indices: [1, 1, 1, 1]), .init(width: 1, height: 1, indices: [2])]
        #expect(try GIFDecoder().readAnimation(gif.bytes()).decodedPixels == [0, 1])
        #expect(try Self.frames(gif.bytes()).count == 2)
    }

    @Test func truncationIsCorrupt() {
        let data = Self.disposalFile()
        for cut in [10, 30, data.count - 12] {
            #expect(throws: DecodeError.self) { try Self.frames(Array(data.prefix(cut))) }
        }
        // Without the trailer byte after a whole frame: accepted, as browsers do.
        #expect((try? Self.frames(Array(data.dropLast())))?.count == 4)
    }

    @Test func stopsWhenAsked() throws {
        var seen = 0
        try GIFDecoder().decodeFrames(Self.disposalFile()) { _ in
            seen += 1
            return seen < 2
        }
        #expect(seen == 2)
        let first = try GIFDecoder().decode(Self.disposalFile(), options: DecodeOptions())
        #expect(first.buffer.pixels.prefix(4) == [255, 0, 0, 255])
    }

    @Test func limitsComeFromTheHeader() {
        var gif = TinyGIFWriter(width: 20_000, height: 20_000, palette: [Self.red])
        gif.frames = [.init(width: 1, height: 1, indices: [0])]
        #expect(throws: DecodeError.self) {
            try GIFDecoder().decode(gif.bytes(), options: DecodeOptions(limits: DecodeLimits(maxPixels: 50_000_000)))
        }
    }
}
