import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct SmartCropTests {
    @Test func picksTheTexturedHalf() {
        let right = PixelStats.halfTextured(width: 400, height: 200, texturedRight: true)
        #expect(SmartCrop.origin(in: right, width: 200, height: 200).x >= 190)
        let left = PixelStats.halfTextured(width: 400, height: 200, texturedRight: false)
        #expect(SmartCrop.origin(in: left, width: 200, height: 200).x <= 10)
        let bottom = PixelStats.halfTextured(width: 150, height: 300, texturedRight: true, horizontal: false)
        #expect(SmartCrop.origin(in: bottom, width: 150, height: 150).y >= 140)
    }

    @Test func flatImageCropsTheCentre() {
        let flat = TestImages.constant(width: 300, height: 100, [90, 90, 90])
        let o = SmartCrop.origin(in: flat, width: 100, height: 100)
        #expect(abs(o.x - 100) <= 4 && o.y == 0)
    }

    @Test func anchorIsAFractionOfTheFreeSpace() {
        let left = PixelStats.halfTextured(width: 400, height: 200, texturedRight: false)
        let a = SmartCrop.anchor(in: left, width: 200, height: 200)
        #expect(a.x < 0.05 && a.y == 0.5)
    }

    @Test func cropWithSmartGravityKeepsTheDetail() throws {
        let image = PixelStats.halfTextured(width: 400, height: 200)
        let out = try Crop(CropOptions(width: 200, height: 200, gravity: .smart))
            .process(image, context: PixelStats.context(image))
        #expect(out.size == PixelSize(width: 200, height: 200))
        // Every column of the result is textured: the flat half has been left out.
        let flatColumns = (0..<200).filter { x in (0..<200).allSatisfy { out.pixel(x: x, y: $0) == [128, 128, 128] } }
        #expect(flatColumns.count <= 10)
    }

    @Test func fillResizeWithSmartGravityKeepsTheDetail() throws {
        let image = PixelStats.halfTextured(width: 400, height: 200, texturedRight: false)
        var options = ResizeOptions(width: 100, height: 100, mode: .fill)
        options.gravity = .smart
        let resize = Resize(options)
        let out = try resize.process(image, context: PixelStats.context(image))
        #expect(out.size == PixelSize(width: 100, height: 100))
        let centre = try Resize(ResizeOptions(width: 100, height: 100, mode: .fill)).process(image, context: PixelStats.context(image))
        // The centre window is half flat; the smart one is all texture.
        #expect(Double(PixelStats.edgeEnergy(out)) > 1.6 * Double(PixelStats.edgeEnergy(centre)))
        let flatColumns = (0..<100).filter { x in (0..<100).allSatisfy { out.pixel(x: x, y: $0) == [128, 128, 128] } }
        #expect(flatColumns.isEmpty)
    }

    @Test func fillSmartOnAShrunkInputPlansOnTheLogicalSize() throws {
        // Decoded at half size (shrink-on-load): same output size as from the full image.
        let input = PixelStats.halfTextured(width: 200, height: 100)
        var options = ResizeOptions(width: 50, height: 50, mode: .fill)
        options.gravity = .smart
        let out = try Resize(options).process(input, context: ProcessingContext(logicalSize: PixelSize(width: 400, height: 200)))
        #expect(out.size == PixelSize(width: 50, height: 50))
        let flatColumns = (0..<50).filter { x in (0..<50).allSatisfy { out.pixel(x: x, y: $0) == [128, 128, 128] } }
        #expect(flatColumns.isEmpty)
    }
}
