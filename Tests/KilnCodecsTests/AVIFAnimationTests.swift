import KilnModel
@testable import KilnCodecs
import Testing

/// Animated AVIF: written frame by frame (an AV1 sequence) and read back frame by frame.
@Suite(.enabled(if: Codecs.canEncode(.avif), "libavif is part of the build's packages"))
struct AVIFAnimationTests {
    static func solid(_ rgb: [UInt8]) -> PixelBuffer {
        PixelBuffer(width: 32, height: 24, channels: 3, pixels: Array((0..<(32 * 24)).flatMap { _ in rgb }))
    }

    static func sequence() throws -> [UInt8] {
        let sink = try AVIFAnimationEncoder().begin(size: PixelSize(width: 32, height: 24), loopCount: 0,
                                                    options: EncodeOptions(format: .avif, quality: 90))
        try sink.add(solid([255, 0, 0]), durationMilliseconds: 100)
        try sink.add(solid([0, 255, 0]), durationMilliseconds: 250)
        try sink.add(solid([0, 0, 255]), durationMilliseconds: 40)
        return try sink.finish()
    }

    @Test func framesDurationsAndColoursRoundTrip() throws {
        let avif = try Self.sequence()
        let info = try AVIFAnimationDecoder().readAnimation(avif)
        #expect(info.frameCount == 3 && info.canvas == PixelSize(width: 32, height: 24) && info.loopCount == 0 && !info.hasAlpha)
        #expect(try AVIFDecoder().readHeader(avif).frameCount == 3)
        var frames: [AnimationFrame] = []
        try AVIFAnimationDecoder().decodeFrames(avif) { frames.append($0); return true }
        #expect(frames.map(\.durationMilliseconds) == [100, 250, 40])
        let expected: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255]]
        for (frame, colour) in zip(frames, expected) {
            let p = frame.buffer.pixel(x: 16, y: 12)
            #expect(zip(p, colour).allSatisfy { abs(Int($0) - Int($1)) <= 8 }, "\(p) for \(colour)")
        }
        // The still decoder gives the first frame.
        #expect(try AVIFDecoder().decode(avif, options: DecodeOptions()).buffer.pixel(x: 1, y: 1)[0] > 240)
    }

    @Test func stoppingEarlyDecodesNoMore() throws {
        var seen = 0
        try AVIFAnimationDecoder().decodeFrames(try Self.sequence()) { _ in seen += 1; return false }
        #expect(seen == 1)
    }

    @Test func aTruncatedSequenceIsCorrupt() throws {
        let avif = try Self.sequence()
        #expect(throws: DecodeError.self) {
            try AVIFAnimationDecoder().decodeFrames(Array(avif.prefix(avif.count - 40))) { _ in true }
        }
    }
}
