import KilnModel
@testable import KilnCodecs
import Testing

/// ICO out: one PNG entry, its directory, and the size limit.
@Suite struct ICOEncoderTests {
    @Test func onePNGEntryOfTheResult() throws {
        var rgb = PixelBuffer(width: 48, height: 32, channels: 3)
        for i in stride(from: 0, to: rgb.pixels.count, by: 3) { rgb.pixels[i] = 200 }
        let ico = try ICOEncoder().encode(rgb, options: EncodeOptions(format: .ico))
        #expect(Array(ico.prefix(6)) == [0, 0, 1, 0, 1, 0])
        #expect(ico[6] == 48 && ico[7] == 32 && ico[12] == 32)   // width, height, 32 bits
        let length = Int(ico[14]) | Int(ico[15]) << 8 | Int(ico[16]) << 16 | Int(ico[17]) << 24
        #expect(Int(ico[18]) == 22 && length == ico.count - 22)
        let png = Array(ico[22...])
        let back = try PNGDecoder().decode(png, options: DecodeOptions()).buffer
        #expect(back.channels == 4 && back.pixel(x: 5, y: 5) == [200, 0, 0, 255])
    }

    @Test func sideOf256IsWrittenAsZero() throws {
        let ico = try ICOEncoder().encode(PixelBuffer(width: 256, height: 256, channels: 4), options: EncodeOptions(format: .ico))
        #expect(ico[6] == 0 && ico[7] == 0)
        #expect(throws: EncodeError.self) { try ICOEncoder().encode(PixelBuffer(width: 257, height: 1, channels: 4), options: EncodeOptions(format: .ico)) }
    }
}
