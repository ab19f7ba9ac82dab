import Testing
import KilnTestBytes
import KilnModel
@testable import KilnCodecs

/// Large PNGs read row by row and box-averaged while decoding (issue 14): the rows libpng's row
/// API returns equal the simplified API's for every eligible kind of file, and the shrunk image
/// is the premultiplied box average of the full decode.
@Suite struct PNGShrinkOnLoadTests {
    let decoder = PNGDecoder()

    /// Rows read one by one with boxes of 1 × 1 against the whole-image decode.
    func expectRowsMatch(_ png: [UInt8], _ label: String) throws {
        let full = try decoder.decode(png, options: DecodeOptions()).buffer
        let rows = try png.withUnsafeBytes { bytes in
            try #require(try PNGShrinkOnLoad.decode(bytes, k: (1, 1)), "\(label): not eligible")
        }
        #expect(rows.size == full.size && rows.channels == full.channels, "\(label)")
        var differing = 0
        let c = full.channels
        for i in stride(from: 0, to: full.pixels.count, by: c) {
            // Fully transparent pixels come out transparent black (the colour is never seen).
            let clear = c == 4 && full.pixels[i + 3] == 0
            let a = clear ? [0, 0, 0, 0] : Array(full.pixels[i..<(i + c)])
            if Array(rows.pixels[i..<(i + c)]) != a { differing += 1 }
        }
        #expect(differing == 0, "\(label): \(differing) pixels differ")
    }

    @Test func everyEligibleKindReadsAsTheSimplifiedAPIDoes() throws {
        let w = 9, h = 5
        let rgb = (0..<(w * h * 3)).map { ($0 * 37) % 256 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 2, samples: rgb), "RGB")
        let rgba = (0..<(w * h * 4)).map { $0 % 4 == 3 ? ($0 * 53) % 256 : ($0 * 29) % 256 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 6, samples: rgba), "RGBA")
        let grey = (0..<(w * h)).map { ($0 * 11) % 256 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 0, samples: grey), "grey")
        let grey2 = (0..<(w * h)).map { $0 % 4 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 2, colorType: 0, samples: grey2), "grey 2-bit")
        let greyAlpha = (0..<(w * h * 2)).map { ($0 * 71) % 256 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 4, samples: greyAlpha), "grey+alpha")
        let indices = (0..<(w * h)).map { $0 % 3 }
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 3, samples: indices,
                                              palette: [255, 0, 0, 0, 255, 0, 10, 20, 30], transparency: [255, 128]),
                            "palette + tRNS")
        try expectRowsMatch(TinyPNGWriter.png(width: w, height: h, bitDepth: 8, colorType: 2, samples: rgb, gamma: 45455),
                            "gAMA sRGB")
    }

    @Test func otherGammaAndSixteenBitAreNotEligible() throws {
        let rgb = (0..<(4 * 4 * 3)).map { ($0 * 37) % 256 }
        for png in [TinyPNGWriter.png(width: 4, height: 4, bitDepth: 8, colorType: 2, samples: rgb, gamma: 100_000),
                    TinyPNGWriter.png(width: 4, height: 4, bitDepth: 16, colorType: 2, samples: rgb.map { $0 * 257 })] {
            let rows = try png.withUnsafeBytes { try PNGShrinkOnLoad.decode($0, k: (1, 1)) }
            #expect(rows == nil)
            let chunks = try png.withUnsafeBytes { bytes in try PNGChunks.scan(bytes) }
            #expect(!chunks.rowReadable)
        }
    }

    @Test func aLargeSourceIsShrunkToItsPremultipliedBoxAverage() throws {
        let w = 4096, h = 4100   // 67 MB as RGBA: just above the 64 MiB where streaming starts
        var pixels = [UInt8](repeating: 0, count: w * h * 4)
        for y in 0..<h {
            for x in 0..<w {
                let i = (y * w + x) * 4
                pixels[i] = UInt8(truncatingIfNeeded: x &* 7 &+ y)
                pixels[i + 1] = UInt8(truncatingIfNeeded: y &* 3)
                pixels[i + 2] = UInt8(truncatingIfNeeded: x ^ y)
                pixels[i + 3] = (x / 64 + y / 64) % 3 == 0 ? 0 : UInt8(truncatingIfNeeded: 128 + x % 128)
            }
        }
        let png = try PNGEncoder().encode(PixelBuffer(width: w, height: h, channels: 4, pixels: pixels),
                                          options: EncodeOptions(format: .png, pngCompressionLevel: 1))
        let minimum = PixelSize(width: 375, height: 375)
        let planned = try #require(PNGShrinkOnLoad.plannedDecode(png, minimum: minimum))
        #expect(planned.streamed && planned.size == PixelSize(width: 410, height: 410))
        let shrunk = try decoder.decode(png, options: DecodeOptions(minimumSize: minimum)).buffer
        #expect(shrunk.size == planned.size && shrunk.channels == 4)
        // The reference: boxes of 10 x 10 (the last ones 6 wide, 10 high) over the full decode.
        var worst = 0
        for by in 0..<410 {
            for bx in 0..<410 {
                var s = [0, 0, 0, 0], n = 0
                for y in (by * 10)..<min(by * 10 + 10, h) {
                    for x in (bx * 10)..<min(bx * 10 + 10, w) {
                        let i = (y * w + x) * 4, a = Int(pixels[i + 3])
                        s[0] += Int(pixels[i]) * a; s[1] += Int(pixels[i + 1]) * a; s[2] += Int(pixels[i + 2]) * a; s[3] += a
                        n += 1
                    }
                }
                let o = (by * 410 + bx) * 4
                let expected = s[3] == 0 ? [0, 0, 0, 0]
                    : [(s[0] + s[3] / 2) / s[3], (s[1] + s[3] / 2) / s[3], (s[2] + s[3] / 2) / s[3], (s[3] + n / 2) / n]
                for c in 0..<4 { worst = max(worst, abs(Int(shrunk.pixels[o + c]) - expected[c])) }
            }
        }
        #expect(worst == 0)
        // Small sources decode whole, as before.
        let small = try decoder.decode(TinyPNGWriter.png(width: 40, height: 40, bitDepth: 8, colorType: 2,
                                                         samples: Array(repeating: 7, count: 4800)),
                                       options: DecodeOptions(minimumSize: PixelSize(width: 4, height: 4))).buffer
        #expect(small.size == PixelSize(width: 40, height: 40))
    }
}
