import KilnModel
@testable import KilnCodecs
import Testing

/// GIF out: read back by Kiln's own GIF decoder (giflib), colours, transparency, frames, delays
/// and the loop count.
@Suite struct GIFEncoderTests {
    /// Four flat quadrants of four colours: within 256 colours, so they must come back exactly.
    static func quadrants(alpha: Bool = false) -> PixelBuffer {
        let colours: [[UInt8]] = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [250, 250, 250]]
        var b = PixelBuffer(width: 16, height: 16, channels: alpha ? 4 : 3)
        for y in 0..<16 {
            for x in 0..<16 {
                let q = (y / 8) * 2 + x / 8
                let o = (y * 16 + x) * b.channels
                for ch in 0..<3 { b.pixels[o + ch] = colours[q][ch] }
                if alpha { b.pixels[o + 3] = q == 3 ? 0 : 255 }
            }
        }
        return b
    }

    @Test func aStillOfFewColoursComesBackExactly() throws {
        let gif = try GIFEncoder().encode(Self.quadrants(), options: EncodeOptions(format: .gif))
        #expect(gif.starts(with: Array("GIF89a".utf8)) && gif.last == 0x3B)
        let back = try GIFDecoder().decode(gif, options: DecodeOptions()).buffer
        #expect(back.size == PixelSize(width: 16, height: 16))
        #expect(back.pixel(x: 2, y: 2).prefix(3) == [255, 0, 0] && back.pixel(x: 12, y: 12).prefix(3) == [250, 250, 250])
    }

    @Test func alphaBelowHalfIsTheTransparentIndex() throws {
        let gif = try GIFEncoder().encode(Self.quadrants(alpha: true), options: EncodeOptions(format: .gif))
        let back = try GIFDecoder().decode(gif, options: DecodeOptions()).buffer
        #expect(back.channels == 4)
        #expect(back.pixel(x: 12, y: 12)[3] == 0 && back.pixel(x: 2, y: 2) == [255, 0, 0, 255])
    }

    @Test func aPhotoIsReducedToAtMost256Colours() throws {
        var photo = PixelBuffer(width: 64, height: 64, channels: 3)
        for y in 0..<64 {
            for x in 0..<64 {
                let o = (y * 64 + x) * 3
                photo.pixels[o] = UInt8(x * 4); photo.pixels[o + 1] = UInt8(y * 4); photo.pixels[o + 2] = UInt8((x + y) * 2)
            }
        }
        let back = try GIFDecoder().decode(try GIFEncoder().encode(photo, options: EncodeOptions(format: .gif)), options: DecodeOptions()).buffer
        var colours = Set<[UInt8]>()
        var error = 0
        for y in 0..<64 {
            for x in 0..<64 {
                let p = back.pixel(x: x, y: y)
                colours.insert(Array(p.prefix(3)))
                for ch in 0..<3 { error += abs(Int(p[ch]) - Int(photo.pixels[(y * 64 + x) * 3 + ch])) }
            }
        }
        #expect(colours.count <= 256 && colours.count > 64)
        #expect(Double(error) / Double(64 * 64 * 3) < 6, "mean error \(Double(error) / Double(64 * 64 * 3))")
        // Dithered, the mean error stays small too, and other pixels are chosen.
        let dithered = GIFQuantizer.quantize(photo, dither: true)
        #expect(dithered.indices != GIFQuantizer.quantize(photo).indices && dithered.palette.count <= 768)
    }

    @Test func animationsKeepFramesDelaysAndLoops() throws {
        let sink = try GIFEncoder().begin(size: PixelSize(width: 16, height: 16), loopCount: 3, options: EncodeOptions(format: .gif))
        var second = Self.quadrants()
        for i in stride(from: 0, to: second.pixels.count, by: 3) { second.pixels[i] = 0; second.pixels[i + 1] = 0; second.pixels[i + 2] = 0 }
        try sink.add(Self.quadrants(), durationMilliseconds: 100)
        try sink.add(second, durationMilliseconds: 250)
        try sink.add(Self.quadrants(), durationMilliseconds: 0)
        let gif = try sink.finish()
        let info = try GIFDecoder().readAnimation(gif)
        #expect(info.frameCount == 3 && info.loopCount == 3 && info.canvas == PixelSize(width: 16, height: 16))
        var frames: [AnimationFrame] = []
        try GIFDecoder().decodeFrames(gif) { frames.append($0); return true }
        #expect(frames.map(\.durationMilliseconds) == [100, 250, 0])
        #expect(frames[1].buffer.pixel(x: 2, y: 2).prefix(3) == [0, 0, 0] && frames[2].buffer.pixel(x: 2, y: 2).prefix(3) == [255, 0, 0])
        // Played forever: the extension says 0; once: no extension (GIFDecoder reads 1).
        let forever = try GIFEncoder().begin(size: PixelSize(width: 16, height: 16), loopCount: 0, options: EncodeOptions(format: .gif))
        try forever.add(Self.quadrants(), durationMilliseconds: 10)
        #expect(try GIFDecoder().readAnimation(try forever.finish()).loopCount == 0)
    }

    @Test func oversizedIsRefused() {
        #expect(throws: EncodeError.self) { try GIFEncoder().encode(PixelBuffer(width: 70_000, height: 1, channels: 3), options: EncodeOptions(format: .gif)) }
    }
}
