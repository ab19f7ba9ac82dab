import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct ColorFilterTests {
    static let photo = PixelStats.photoLike(width: 40, height: 30)

    func run(_ filter: ColorFilter, _ image: PixelBuffer = photo) throws -> PixelBuffer {
        try filter.process(image, context: PixelStats.context(image))
    }

    @Test func grayscaleIsRec709Luma() throws {
        let out = try run(.grayscale)
        for i in 0..<out.pixelCount {
            #expect(out.pixels[i * 3] == out.pixels[i * 3 + 1] && out.pixels[i * 3 + 1] == out.pixels[i * 3 + 2])
        }
        let red = try run(.grayscale, TestImages.constant(width: 1, height: 1, [255, 0, 0]))
        #expect(red.pixels == [54, 54, 54])
        let green = try run(.grayscale, TestImages.constant(width: 1, height: 1, [0, 255, 0]))
        #expect(green.pixels == [182, 182, 182])
    }

    @Test func sepiaIsWarm() throws {
        let out = try run(.sepia, TestImages.constant(width: 2, height: 2, [128, 128, 128]))
        let p = out.pixel(x: 0, y: 0)
        #expect(p[0] > p[1] && p[1] > p[2], "\(p)")
        #expect(p == [173, 154, 120])
    }

    @Test func tintMultipliesLumaByTheColour() throws {
        let colour = RGBColor(red: 0x33, green: 0x66, blue: 0xcc)
        let image = TestImages.constant(width: 1, height: 3, [255, 255, 255])
        var mixed = image
        mixed.pixels = [255, 255, 255, 0, 0, 0, 128, 128, 128]
        let out = try run(.tint(colour), mixed)
        #expect(out.pixel(x: 0, y: 0) == [0x33, 0x66, 0xcc])
        #expect(out.pixel(x: 0, y: 1) == [0, 0, 0])
        #expect(out.pixel(x: 0, y: 2) == [26, 51, 102])
    }

    @Test func brightnessShiftsTheMean() throws {
        #expect(PixelStats.mean(try run(.brightness(30))) > PixelStats.mean(Self.photo) + 50)
        #expect(PixelStats.mean(try run(.brightness(-30))) < PixelStats.mean(Self.photo) - 50)
        #expect(try run(.brightness(0)) == Self.photo)
        #expect(try run(.brightness(100)).pixels.allSatisfy { $0 == 255 })
    }

    @Test func contrastScalesTheSpread() throws {
        let sd = PixelStats.standardDeviation(Self.photo)
        #expect(PixelStats.standardDeviation(try run(.contrast(40))) > sd * 1.5)
        #expect(PixelStats.standardDeviation(try run(.contrast(-50))) < sd * 0.6)
        #expect(try run(.contrast(-100)).pixels.allSatisfy { $0 == 128 })
        #expect(try run(.contrast(0)) == Self.photo)
    }

    @Test func saturationMovesTowardOrAwayFromGrey() throws {
        let grey = try run(.saturation(-100))
        for i in 0..<grey.pixelCount {
            #expect(grey.pixels[i * 3] == grey.pixels[i * 3 + 1] && grey.pixels[i * 3 + 1] == grey.pixels[i * 3 + 2])
        }
        #expect(grey == (try run(.grayscale)))
        let chroma = PixelStats.chroma(Self.photo)
        #expect(PixelStats.chroma(try run(.saturation(50))) > chroma * 1.3)
        #expect(PixelStats.chroma(try run(.saturation(-50))) < chroma * 0.6)
    }

    @Test func alphaIsUntouched() throws {
        let rgba = TestImages.constant(width: 3, height: 1, [200, 50, 10, 77])
        for filter in [ColorFilter.grayscale, .sepia, .tint(.white), .brightness(20), .contrast(20), .saturation(40)] {
            let out = try run(filter, rgba)
            #expect(out.channels == 4 && (0..<3).allSatisfy { out.pixels[$0 * 4 + 3] == 77 }, "\(filter.identifier)")
        }
    }

    @Test func identifiersAreTheCanonicalSegments() {
        #expect(ColorFilter.grayscale.identifier == "grayscale")
        #expect(ColorFilter.tint(RGBColor(red: 1, green: 2, blue: 3)).identifier == "tint:010203")
        #expect(ColorFilter.contrast(-20).identifier == "contrast:-20")
    }
}
