import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct TrimTests {
    /// A `w`×`h` image of `background` with an opaque block of `content` at `box`.
    static func framed(width w: Int, height h: Int, channels: Int = 3, background: [UInt8], content: [UInt8],
                       box: (x: Int, y: Int, width: Int, height: Int)) -> PixelBuffer {
        var pixels: [UInt8] = []
        pixels.reserveCapacity(w * h * channels)
        for y in 0..<h {
            for x in 0..<w {
                let inside = x >= box.x && x < box.x + box.width && y >= box.y && y < box.y + box.height
                pixels += inside ? content : background
            }
        }
        return PixelBuffer(width: w, height: h, channels: channels, pixels: pixels)
    }

    func trim(_ options: TrimOptions, _ image: PixelBuffer) throws -> PixelBuffer {
        try Trim(options).process(image, context: PixelStats.context(image))
    }

    @Test func cutsAWhiteBorderToTheContentBox() throws {
        let image = Self.framed(width: 40, height: 30, background: [255, 255, 255], content: [200, 30, 10],
                                box: (5, 3, 20, 17))
        let out = try trim(TrimOptions(threshold: 0), image)
        #expect(out.size == PixelSize(width: 20, height: 17))
        #expect(out.pixel(x: 0, y: 0) == [200, 30, 10])
        #expect(out.pixel(x: 19, y: 16) == [200, 30, 10])
    }

    @Test func thresholdDecidesWhatCountsAsBorder() throws {
        // A faint grey frame (250) inside the white one: border at 10, content at 2.
        let image = Self.framed(width: 20, height: 20, background: [255, 255, 255], content: [250, 250, 250], box: (2, 2, 16, 16))
        #expect(try trim(TrimOptions(threshold: 10), image).size == image.size)   // all border: unchanged
        #expect(try trim(TrimOptions(threshold: 2), image).size == PixelSize(width: 16, height: 16))
    }

    @Test func anExplicitColourIsTheBorderColour() throws {
        let image = Self.framed(width: 30, height: 20, background: [0, 0, 0], content: [255, 255, 255], box: (10, 4, 5, 6))
        // Black is the top-left's colour: the default trims it.
        #expect(try trim(TrimOptions(threshold: 0), image).size == PixelSize(width: 5, height: 6))
        // With white as the colour nothing at the edges matches: unchanged.
        #expect(try trim(TrimOptions(threshold: 0, color: .white), image).size == image.size)
    }

    @Test func anImageWithoutBorderIsUnchanged() throws {
        let image = PixelStats.photoLike(width: 24, height: 16)
        #expect(try trim(TrimOptions(threshold: 5), image) == image)
    }

    @Test func aUniformImageIsUnchangedNeverEmpty() throws {
        let image = Self.framed(width: 9, height: 7, background: [12, 34, 56], content: [12, 34, 56], box: (0, 0, 0, 0))
        #expect(Trim(TrimOptions(threshold: 0)).box(in: image) == nil)
        #expect(try trim(TrimOptions(threshold: 0), image) == image)
        let one = PixelBuffer(width: 1, height: 1, channels: 3, pixels: [1, 2, 3])
        #expect(try trim(TrimOptions(threshold: 255), one) == one)
    }

    @Test func equalFlagsKeepTheSmallerCutOnBothSides() throws {
        // Content at x 4..<10 of 20 (left cut 4, right cut 10), y 2..<5 of 12 (top 2, bottom 7).
        let image = Self.framed(width: 20, height: 12, background: [255, 255, 255], content: [0, 0, 0], box: (4, 2, 6, 3))
        let h = try #require(Trim(TrimOptions(threshold: 0, equalHorizontal: true)).box(in: image))
        #expect(h.x == 4 && h.width == 12 && h.y == 2 && h.height == 3)
        let v = try #require(Trim(TrimOptions(threshold: 0, equalVertical: true)).box(in: image))
        #expect(v.x == 4 && v.width == 6 && v.y == 2 && v.height == 8)
        let both = try trim(TrimOptions(threshold: 0, equalHorizontal: true, equalVertical: true), image)
        #expect(both.size == PixelSize(width: 12, height: 8))
    }

    @Test func transparentBordersAreBorderWhateverTheirColour() throws {
        // Transparent pixels of two different colours around an opaque block.
        var image = Self.framed(width: 16, height: 10, channels: 4, background: [0, 0, 0, 0], content: [9, 99, 199, 255],
                                box: (3, 2, 7, 4))
        image.pixels[(9 * 16 + 15) * 4] = 255   // transparent but red: still border
        let out = try trim(TrimOptions(threshold: 0), image)
        #expect(out.size == PixelSize(width: 7, height: 4))
        #expect(out.channels == 4)
        // An explicit colour: transparent pixels are border too.
        #expect(try trim(TrimOptions(threshold: 0, color: .white), image).size == PixelSize(width: 7, height: 4))
        // Half-transparent white is not opaque white at threshold 10.
        let veil = Self.framed(width: 8, height: 8, channels: 4, background: [255, 255, 255, 255], content: [255, 255, 255, 128],
                               box: (2, 2, 3, 3))
        #expect(try trim(TrimOptions(threshold: 10), veil).size == PixelSize(width: 3, height: 3))
    }
}
