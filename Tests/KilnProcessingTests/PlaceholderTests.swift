import KilnModel
import Testing
@testable import KilnProcessing

/// BlurHash, ThumbHash and the dominant colour on small known images. The expected hashes come
/// from the reference packages (PyPI `blurhash` 1.1.5 and `thumbhash` 0.1.2, whose ThumbHash is a
/// port of the reference JavaScript) run on the same pixels.
@Suite struct PlaceholderTests {
    /// 12 × 8: r = 21x, g = 31y, b = 13(x + y) + 40 (mod 256).
    static func gradient(alpha: ((Int, Int) -> UInt8)? = nil) -> PixelBuffer {
        let w = 12, h = 8, ch = alpha == nil ? 3 : 4
        var pixels: [UInt8] = []
        for y in 0..<h {
            for x in 0..<w {
                pixels += [UInt8((x * 21) % 256), UInt8((y * 31) % 256), UInt8(((x + y) * 13 + 40) % 256)]
                if let alpha { pixels.append(alpha(x, y)) }
            }
        }
        return PixelBuffer(width: w, height: h, channels: ch, pixels: pixels)
    }

    @Test func blurHashMatchesTheReference() {
        let image = Self.gradient()
        #expect(BlurHash.encode(image) == "LnG8+-2%sQt9u:R$jxjEf2fTfOfS")
        #expect(BlurHash.encode(image, components: BlurHashComponents(x: 1, y: 1)) == "00G8+-")
        #expect(BlurHash.encode(image, components: BlurHashComponents(x: 9, y: 9)).hasPrefix("|nG8+-2%sQt9N=xbN?xa"))
        // 2 + 4 characters, then 2 per AC component.
        #expect(BlurHash.encode(image, components: BlurHashComponents(x: 9, y: 9)).count == 6 + 2 * 80)
    }

    @Test func blurHashIgnoresAlpha() {
        #expect(BlurHash.encode(Self.gradient(alpha: { _, _ in 0 })) == BlurHash.encode(Self.gradient()))
    }

    @Test func base83() {
        #expect(BlurHash.encode83(0, length: 2) == "00")
        #expect(BlurHash.encode83(82, length: 1) == "~")
        #expect(BlurHash.encode83(83 * 83 - 1, length: 2) == "~~")
    }

    @Test func thumbHashMatchesTheReference() {
        #expect(Base64.encode(ThumbHash.encode(Self.gradient())) == "3wYOHZpwd3hxeHiHh3eHh8bAC/eI")
    }

    @Test func thumbHashOfAPortraitAndOfAlpha() {
        var pixels: [UInt8] = []
        for y in 0..<12 { for x in 0..<8 { pixels += [UInt8((x * 29) % 256), UInt8((y * 17) % 256), 77] } }
        let portrait = ThumbHash.encode(PixelBuffer(width: 8, height: 12, channels: 3, pixels: pixels))
        #expect(portrait[4] & 0x80 == 0, "the landscape bit is clear for a portrait image")
        let translucent = ThumbHash.encode(Self.gradient(alpha: { x, y in UInt8((x * y * 9) % 256) }))
        #expect(translucent[2] & 0x80 != 0, "the alpha bit is set")
        #expect(ThumbHash.encode(Self.gradient(alpha: { _, _ in 255 })) == ThumbHash.encode(Self.gradient()),
                "opaque RGBA hashes as RGB")
    }

    @Test func dominantColourIsTheFullestCell() {
        // 70 % dark red (two shades in one cell), 30 % white: the red cell's mean.
        var pixels: [UInt8] = []
        for i in 0..<100 { pixels += i < 35 ? [200, 10, 10] : i < 70 ? [202, 12, 14] : [255, 255, 255] }
        let image = PixelBuffer(width: 10, height: 10, channels: 3, pixels: pixels)
        #expect(DominantColour.of(image) == RGBColor(red: 201, green: 11, blue: 12))
    }

    @Test func dominantColourSkipsTransparentPixels() {
        var pixels: [UInt8] = []
        for i in 0..<10 { pixels += i < 8 ? [0, 0, 0, 0] : [0, 128, 255, 255] }
        #expect(DominantColour.of(PixelBuffer(width: 10, height: 1, channels: 4, pixels: pixels)) == RGBColor(red: 0, green: 128, blue: 255))
        #expect(DominantColour.of(PixelBuffer(width: 2, height: 1, channels: 4)) == nil)
    }
}
