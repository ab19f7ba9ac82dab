import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct FlattenTests {
    static func rgba(_ values: [UInt8], premultiplied: Bool = false) -> PixelBuffer {
        PixelBuffer(width: values.count / 4, height: 1, channels: 4,
                    isPremultiplied: premultiplied, pixels: values)
    }

    @Test func halfTransparentRedOnWhite() throws {
        let image = Self.rgba([255, 0, 0, 128])
        let out = try Flatten.white.process(image, context: ProcessingContext(logicalSize: image.size))
        #expect(out.channels == 3)
        let p = out.pixel(x: 0, y: 0)
        #expect(p[0] == 255)
        #expect(abs(Int(p[1]) - 128) <= 1 && abs(Int(p[2]) - 128) <= 1, "\(p)")
    }

    @Test func opaqueKeepsColourAndTransparentTakesTheBackground() {
        let background = Flatten(red: 10, green: 20, blue: 30)
        let out = background.apply(to: Self.rgba([200, 100, 50, 255, 200, 100, 50, 0, 0, 0, 0, 0]))
        #expect(out.pixels == [200, 100, 50, 10, 20, 30, 10, 20, 30])
    }

    /// Premultiplied input gives the same result as the straight form of the same colour.
    @Test func premultipliedInputMatchesStraightInput() {
        let straight = Self.rgba([255, 0, 0, 128, 40, 80, 120, 64, 0, 255, 0, 200])
        let premultiplied = Alpha.premultiplied(straight)
        #expect(premultiplied.isPremultiplied)
        let bg = Flatten(red: 0, green: 0, blue: 255)
        let a = bg.apply(to: straight).pixels
        let b = bg.apply(to: premultiplied).pixels
        #expect(zip(a, b).allSatisfy { abs(Int($0) - Int($1)) <= 1 }, "\(a) vs \(b)")
    }

    @Test func rgbPassesThrough() {
        let image = TestImages.noise(width: 4, height: 3, channels: 3)
        #expect(Flatten.black.apply(to: image) == image)
    }

    @Test func identifierNamesTheColour() {
        #expect(Flatten.white.identifier == "bg:ffffff")
        #expect(Flatten(red: 1, green: 0xab, blue: 0x10).identifier == "bg:01ab10")
    }
}
