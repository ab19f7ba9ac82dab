import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct AlphaTests {
    @Test func opacity() {
        #expect(Alpha.isOpaque(TestImages.constant(width: 5, height: 5, [1, 2, 3])))
        #expect(Alpha.isOpaque(TestImages.constant(width: 300, height: 200, [1, 2, 3, 255])))
        // One translucent pixel anywhere, including the very last and one past a scan block.
        for index in [0, 4096, 4097, 300 * 200 - 1] {
            var image = TestImages.constant(width: 300, height: 200, [1, 2, 3, 255])
            image.pixels[index * 4 + 3] = 254
            #expect(!Alpha.isOpaque(image), "translucent pixel \(index)")
        }
        // Colour bytes of 0 do not count as alpha.
        #expect(Alpha.isOpaque(TestImages.constant(width: 3, height: 3, [0, 0, 0, 255])))
    }

    @Test func droppingAlphaKeepsColour() {
        let image = PixelBuffer(width: 2, height: 1, channels: 4, pixels: [1, 2, 3, 255, 4, 5, 6, 255])
        let rgb = Alpha.droppingAlpha(image)
        #expect(rgb.channels == 3 && rgb.pixels == [1, 2, 3, 4, 5, 6])
    }

    @Test func premultiplyRounds() {
        let image = PixelBuffer(width: 3, height: 1, channels: 4,
                                pixels: [255, 128, 1, 128, 200, 100, 50, 0, 9, 8, 7, 255])
        let p = Alpha.premultiplied(image)
        #expect(p.isPremultiplied)
        #expect(p.pixels == [128, 64, 1, 128, 0, 0, 0, 0, 9, 8, 7, 255])
        #expect(Alpha.premultiplied(p) == p, "already premultiplied: unchanged")
    }

    /// mulDiv255 is exact rounding for every pair of bytes.
    @Test func mulDiv255IsExact() {
        for x in 0...255 as ClosedRange<UInt32> {
            for y in 0...255 as ClosedRange<UInt32> {
                let exact = UInt8((Double(x * y) / 255).rounded())
                if Alpha.mulDiv255(x, y) != exact {
                    Issue.record("\(x) × \(y): \(Alpha.mulDiv255(x, y)) vs \(exact)")
                    return
                }
            }
        }
    }

    /// Straight → premultiplied → straight keeps colour for opaque-enough pixels.
    @Test func roundTrip() {
        let image = TestImages.noise(width: 64, height: 64, channels: 4, seed: 3)
        let back = Alpha.unpremultiplied(Alpha.premultiplied(image))
        #expect(!back.isPremultiplied)
        for i in stride(from: 0, to: image.pixels.count, by: 4) {
            let a = Int(image.pixels[i + 3])
            #expect(Int(back.pixels[i + 3]) == a)
            if a == 0 { #expect(back.pixels[i..<i + 3].allSatisfy { $0 == 0 }) }
            // Quantisation to 8-bit premultiplied loses up to 255 / (2a) steps.
            let tolerance = a == 0 ? 255 : 255 / (2 * a) + 1
            for c in 0..<3 {
                #expect(abs(Int(back.pixels[i + c]) - Int(image.pixels[i + c])) <= tolerance)
            }
        }
    }
}
