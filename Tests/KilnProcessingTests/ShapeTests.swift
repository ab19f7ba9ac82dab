import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct ShapeTests {
    static let photo = PixelStats.photoLike(width: 120, height: 80)

    @Test func circleCropsTheCentredSquareWithTransparentCorners() throws {
        let out = try Circle().process(Self.photo, context: PixelStats.context(Self.photo))
        #expect(out.size == PixelSize(width: 80, height: 80) && out.channels == 4)
        for (x, y) in [(0, 0), (79, 0), (0, 79), (79, 79), (5, 5)] {
            #expect(out.pixel(x: x, y: y)[3] == 0, "corner \(x),\(y)")
        }
        #expect(out.pixel(x: 40, y: 40)[3] == 255)
        #expect(out.pixel(x: 0, y: 40)[3] > 0, "the disc touches the edge")
        // Colour is the source's centred square (offset 20 columns).
        #expect(Array(out.pixel(x: 40, y: 40)[0..<3]) == Self.photo.pixel(x: 60, y: 40))
    }

    @Test func circleEdgeIsAntialiased() throws {
        let out = try Circle().process(Self.photo, context: PixelStats.context(Self.photo))
        let alphas = (0..<out.pixelCount).map { out.pixels[$0 * 4 + 3] }
        let partial = alphas.filter { $0 > 0 && $0 < 255 }
        #expect(partial.count > 100, "about one ring of 2π·40 pixels has partial coverage")
        #expect(partial.count < 600)
        // Coverage rises monotonically from the right edge inward.
        let row = stride(from: 79, through: 70, by: -1).map { out.pixel(x: $0, y: 40)[3] }
        #expect(row == row.sorted())
    }

    @Test func circleWithBackgroundIsOpaqueRGB() throws {
        let bg = RGBColor(red: 0, green: 0, blue: 255)
        let out = try Circle(background: bg).process(Self.photo, context: PixelStats.context(Self.photo))
        #expect(out.channels == 3)
        #expect(out.pixel(x: 0, y: 0) == [0, 0, 255])
        #expect(out.pixel(x: 40, y: 40) == Self.photo.pixel(x: 60, y: 40))
    }

    @Test func circleMultipliesAnExistingAlpha() throws {
        let half = TestImages.constant(width: 20, height: 20, [200, 100, 50, 128])
        let out = try Circle().process(half, context: PixelStats.context(half))
        #expect(out.pixel(x: 10, y: 10) == [200, 100, 50, 128])
        #expect(out.pixel(x: 0, y: 0)[3] == 0)
    }

    @Test func roundedCornersAreTransparentAndEdgesOpaque() throws {
        let out = try RoundedCorners(radius: 16).process(Self.photo, context: PixelStats.context(Self.photo))
        #expect(out.size == Self.photo.size && out.channels == 4)
        for (x, y) in [(0, 0), (119, 0), (0, 79), (119, 79), (2, 2)] {
            #expect(out.pixel(x: x, y: y)[3] == 0, "corner \(x),\(y)")
        }
        for (x, y) in [(60, 0), (0, 40), (119, 40), (60, 79), (16, 16), (60, 40)] {
            #expect(out.pixel(x: x, y: y)[3] == 255, "edge or inside \(x),\(y)")
        }
        let partial = (0..<out.pixelCount).filter { out.pixels[$0 * 4 + 3] > 0 && out.pixels[$0 * 4 + 3] < 255 }
        #expect(partial.count >= 4 * 10, "each quarter circle has an antialiased arc")
    }

    @Test func roundedRadiusIsClampedToHalfTheShortSide() throws {
        let huge = try RoundedCorners(radius: 1000).process(Self.photo, context: PixelStats.context(Self.photo))
        let capsule = try RoundedCorners(radius: 40).process(Self.photo, context: PixelStats.context(Self.photo))
        #expect(huge == capsule)
        #expect(huge.pixel(x: 60, y: 0)[3] == 255 && huge.pixel(x: 60, y: 40)[3] == 255)
        #expect(huge.pixel(x: 5, y: 5)[3] == 0)
    }
}
