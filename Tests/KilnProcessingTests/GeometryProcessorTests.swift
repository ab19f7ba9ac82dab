import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct GeometryProcessorTests {
    /// 6×4 RGB whose pixel (x, y) is (x, y, 7).
    static let grid = TestImages.rgb(width: 6, height: 4) { x, y in (Double(x), Double(y), 7) }

    func crop(_ options: CropOptions, _ image: PixelBuffer = grid) throws(ProcessingError) -> PixelBuffer {
        try Crop(options).process(image, context: PixelStats.context(image))
    }

    @Test func northCropTakesTheTopRowsCentred() throws {
        let out = try crop(CropOptions(width: 2, height: 2, gravity: .north))
        #expect(out.size == PixelSize(width: 2, height: 2))
        #expect(out.pixel(x: 0, y: 0) == [2, 0, 7])
        #expect(out.pixel(x: 1, y: 1) == [3, 1, 7])
    }

    @Test func compassGravitiesPlaceTheWindow() throws {
        #expect(try crop(CropOptions(width: 2, height: 2, gravity: .southEast)).pixel(x: 0, y: 0) == [4, 2, 7])
        #expect(try crop(CropOptions(width: 2, height: 2, gravity: .west)).pixel(x: 0, y: 0) == [0, 1, 7])
        #expect(try crop(CropOptions(width: 2, height: 2, gravity: .center)).pixel(x: 0, y: 0) == [2, 1, 7])
    }

    @Test func focalPointCentresTheWindowAsFarAsTheImageAllows() throws {
        let image = TestImages.rgb(width: 100, height: 100) { x, y in (Double(x), Double(y), 0) }
        let out = try crop(CropOptions(width: 20, height: 20, gravity: .focalPoint(x: 0.3, y: 0.7)), image)
        #expect(out.pixel(x: 0, y: 0) == [20, 60, 0])
        let corner = try crop(CropOptions(width: 20, height: 20, gravity: .focalPoint(x: 1, y: 0)), image)
        #expect(corner.pixel(x: 0, y: 0) == [80, 0, 0])
    }

    @Test func explicitCornerIsCutAtTheEdges() throws {
        let out = try crop(CropOptions(width: 3, height: 3, x: 4, y: 1))
        #expect(out.size == PixelSize(width: 2, height: 3))
        #expect(out.pixel(x: 0, y: 0) == [4, 1, 7])
    }

    @Test func windowLargerThanTheImageIsClamped() throws {
        let out = try crop(CropOptions(width: 5000, height: 5000, gravity: .north))
        #expect(out == Self.grid)
    }

    @Test(arguments: [(6, 0), (0, 4), (100, 100)])
    func cornerOutsideTheImageIsRefused(x: Int, y: Int) {
        #expect {
            try crop(CropOptions(width: 1, height: 1, x: x, y: y))
        } throws: { error in
            guard case ProcessingError.invalidArgument(let option, _) = error else { return false }
            return option == "crop"
        }
    }

    @Test func cropMapsLogicalPixelsToAShrunkInput() throws {
        // The input is half the logical size: crop:50:50:0:50 of 200x200 is 25x25 at 0,25.
        let input = TestImages.rgb(width: 100, height: 100) { x, y in (Double(x), Double(y), 0) }
        let out = try Crop(CropOptions(width: 50, height: 50, x: 0, y: 50))
            .process(input, context: ProcessingContext(logicalSize: PixelSize(width: 200, height: 200)))
        #expect(out.size == PixelSize(width: 25, height: 25))
        #expect(out.pixel(x: 0, y: 0) == [0, 25, 0])
    }

    @Test func rotate90MovesTheTopLeftToTheTopRight() throws {
        let out = try Rotate(.degrees90).process(Self.grid, context: PixelStats.context(Self.grid))
        #expect(out.size == PixelSize(width: 4, height: 6))
        #expect(out.pixel(x: 3, y: 0) == [0, 0, 7])
        #expect(out.pixel(x: 0, y: 0) == [0, 3, 7])
        let back = try Rotate(.degrees270).process(out, context: PixelStats.context(out))
        #expect(back == Self.grid)
    }

    @Test func flipsMirror() throws {
        let ctx = PixelStats.context(Self.grid)
        #expect(try Flip(.horizontal).process(Self.grid, context: ctx).pixel(x: 0, y: 0) == [5, 0, 7])
        #expect(try Flip(.vertical).process(Self.grid, context: ctx).pixel(x: 0, y: 0) == [0, 3, 7])
        #expect(try Flip(.both).process(Self.grid, context: ctx).pixel(x: 0, y: 0) == [5, 3, 7])
        #expect(try Flip(.both).process(Self.grid, context: ctx).pixel(x: 5, y: 3) == [0, 0, 7])
    }

    @Test func padWithoutBackgroundIsTransparentRGBA() throws {
        let out = try Pad(Padding(top: 1, right: 2, bottom: 3, left: 4))
            .process(Self.grid, context: PixelStats.context(Self.grid))
        #expect(out.size == PixelSize(width: 12, height: 8))
        #expect(out.channels == 4)
        #expect(out.pixel(x: 0, y: 0) == [0, 0, 0, 0])
        #expect(out.pixel(x: 11, y: 7) == [0, 0, 0, 0])
        #expect(out.pixel(x: 3, y: 1) == [0, 0, 0, 0])
        #expect(out.pixel(x: 4, y: 1) == [0, 0, 7, 255])
        #expect(out.pixel(x: 9, y: 4) == [5, 3, 7, 255])
        #expect(out.pixel(x: 10, y: 4) == [0, 0, 0, 0])
    }

    @Test func padWithBackgroundIsOpaqueAndKeepsChannels() throws {
        let bg = RGBColor(red: 255, green: 136, blue: 0)
        let out = try Pad(Padding(top: 2, right: 2, bottom: 2, left: 2, background: bg))
            .process(Self.grid, context: PixelStats.context(Self.grid))
        #expect(out.size == PixelSize(width: 10, height: 8) && out.channels == 3)
        #expect(out.pixel(x: 0, y: 0) == [255, 136, 0])
        #expect(out.pixel(x: 2, y: 2) == [0, 0, 7])
        let rgba = TestImages.constant(width: 2, height: 2, [1, 2, 3, 40])
        let padded = try Pad(Padding(top: 1, right: 1, bottom: 1, left: 1, background: bg))
            .process(rgba, context: PixelStats.context(rgba))
        #expect(padded.channels == 4)
        #expect(padded.pixel(x: 0, y: 0) == [255, 136, 0, 255])
        #expect(padded.pixel(x: 1, y: 1) == [1, 2, 3, 40])
    }

    /// `extend` pads what each side lacks at the gravity; a side already long enough is kept.
    @Test func extendGrowsTheCanvasAtTheGravity() throws {
        let ctx = PixelStats.context(Self.grid)
        let centred = try Extend(ExtendOptions(width: 9, height: 7)).process(Self.grid, context: ctx)
        #expect(centred.size == PixelSize(width: 9, height: 7) && centred.channels == 4)
        #expect(centred.pixel(x: 0, y: 0) == [0, 0, 0, 0] && centred.pixel(x: 1, y: 1) == [0, 0, 7, 255])
        let bg = RGBColor(red: 255, green: 136, blue: 0)
        let corner = try Extend(ExtendOptions(width: 10, height: 0, gravity: .southEast, background: bg)).process(Self.grid, context: ctx)
        #expect(corner.size == PixelSize(width: 10, height: 4) && corner.channels == 3)
        #expect(corner.pixel(x: 3, y: 0) == [255, 136, 0] && corner.pixel(x: 4, y: 0) == [0, 0, 7])
        #expect(try Extend(ExtendOptions(width: 2, height: 2)).process(Self.grid, context: ctx).size == Self.grid.size)
    }

    @Test func padOverTheOutputLimitIsRefused() {
        #expect {
            try Pad(Padding(top: 100, right: 100, bottom: 100, left: 100))
                .process(Self.grid, context: PixelStats.context(Self.grid, maxOutputPixels: 10_000))
        } throws: { error in
            guard case ProcessingError.overLimit = error else { return false }
            return true
        }
    }
}
