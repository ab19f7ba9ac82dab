import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct OrientationTests {
    // The stored 3×2 image, pixels named by letter:
    //   A B C
    //   D E F
    static let letters: [Character: Int] = ["A": 0, "B": 1, "C": 2, "D": 3, "E": 4, "F": 5]

    /// The pixel for a letter: distinct values in every channel, so a swapped channel would show.
    static func pixel(_ letter: Character, channels: Int) -> [UInt8] {
        let n = UInt8(letters[letter]! + 1)
        return Array([n, n + 10, n + 20, 255 - n].prefix(channels))
    }

    static func image(_ rows: [String], channels: Int) -> PixelBuffer {
        let pixels = rows.flatMap { row in row.flatMap { pixel($0, channels: channels) } }
        return PixelBuffer(width: rows[0].count, height: rows.count, channels: channels, pixels: pixels)
    }

    static let stored = ["ABC", "DEF"]

    /// The displayed image for each EXIF orientation, worked out by hand from the EXIF
    /// definitions (where row 0 and column 0 of the stored image end up).
    static let expected: [(Int, [String])] = [
        (1, ["ABC", "DEF"]),          // as stored
        (2, ["CBA", "FED"]),          // mirrored left-right
        (3, ["FED", "CBA"]),          // rotated 180°
        (4, ["DEF", "ABC"]),          // mirrored top-bottom
        (5, ["AD", "BE", "CF"]),      // transposed: stored row 0 is the left column
        (6, ["DA", "EB", "FC"]),      // rotated 90° clockwise: stored row 0 is the right column
        (7, ["FC", "EB", "DA"]),      // transverse: stored row 0 is the right column, bottom up
        (8, ["CF", "BE", "AD"]),      // rotated 90° counter-clockwise: stored row 0 is the left column, bottom up
    ]

    @Test(arguments: expected.map(\.0), [3, 4])
    func allEightOrientations(exif: Int, channels: Int) {
        let orientation = Orientation(exifValue: exif)
        let want = Self.image(Self.expected[exif - 1].1, channels: channels)
        let got = orientation.apply(to: Self.image(Self.stored, channels: channels))
        #expect(got == want)
        #expect(got.size == orientation.displaySize(of: PixelSize(width: 3, height: 2)))
        #expect(orientation.swapsDimensions == (exif >= 5))
        #expect(orientation.exifValue == exif)
    }

    @Test func invalidValuesMeanUpright() {
        #expect(Orientation(exifValue: 0) == .identity)
        #expect(Orientation(exifValue: 9) == .identity)
        #expect(Orientation(exifValue: -1) == .identity)
        #expect(Orientation(exifValue: 6) == .rotate90)
    }

    @Test(arguments: Orientation.allCases)
    func inverseUndoesEachOrientation(_ orientation: Orientation) {
        let image = TestImages.noise(width: 13, height: 7, channels: 4)
        #expect(orientation.inverse.apply(to: orientation.apply(to: image)) == image)
    }

    /// Larger than one transform tile (64), odd sizes, both channel counts.
    @Test(arguments: [3, 4])
    func buildingBlocksCompose(channels: Int) {
        let image = TestImages.noise(width: 131, height: 70, channels: channels)
        let r90 = PixelTransform.rotate(image, by: .degrees90)
        #expect(r90.size == PixelSize(width: 70, height: 131))
        // Pixel (x, y) of the source is at (h - 1 - y, x) after a clockwise quarter turn.
        #expect(r90.pixel(x: 70 - 1 - 5, y: 17) == image.pixel(x: 17, y: 5))
        let r180 = PixelTransform.rotate(r90, by: .degrees90)
        #expect(r180 == PixelTransform.rotate(image, by: .degrees180))
        let r270 = PixelTransform.rotate(image, by: .degrees270)
        #expect(PixelTransform.rotate(r180, by: .degrees90) == r270)
        #expect(PixelTransform.rotate(r270, by: .degrees90) == image)
        // Two flips make a half turn; a flip twice is nothing.
        let hv = PixelTransform.flip(PixelTransform.flip(image, .horizontal), .vertical)
        #expect(hv == r180)
        #expect(PixelTransform.flip(PixelTransform.flip(image, .vertical), .vertical) == image)
        // Transpose is a horizontal flip followed by a counter-clockwise quarter turn.
        #expect(PixelTransform.transpose(image)
                == PixelTransform.rotate(PixelTransform.flip(image, .horizontal), by: .degrees270))
        #expect(PixelTransform.transverse(image)
                == PixelTransform.rotate(PixelTransform.flip(image, .horizontal), by: .degrees90))
    }

    @Test func premultipliedFlagIsKept() {
        var image = TestImages.noise(width: 5, height: 3, channels: 4)
        image.isPremultiplied = true
        #expect(Orientation.rotate90.apply(to: image).isPremultiplied)
    }
}
