import KilnModel
import Testing
@testable import KilnProcessing

/// The watermark compositor: the blend in premultiplied space, placement for every gravity,
/// tiling and clipping, and the processor's scaling.
@Suite struct WatermarkCompositorTests {
    /// A premultiplied RGBA mark of one colour and alpha.
    func mark(_ w: Int, _ h: Int, rgb: (UInt8, UInt8, UInt8), alpha: UInt8 = 255) -> PixelBuffer {
        let straight = PixelBuffer(width: w, height: h, channels: 4,
                                   pixels: Array((0..<(w * h)).map { _ in [rgb.0, rgb.1, rgb.2, alpha] }.joined()))
        return WatermarkImage(decoded: straight, identity: "x").pixels
    }

    func canvas(_ w: Int, _ h: Int, channels: Int = 3, value: UInt8 = 0, alpha: UInt8 = 255) -> PixelBuffer {
        let px: [UInt8] = channels == 3 ? [value, value, value] : [value, value, value, alpha]
        return PixelBuffer(width: w, height: h, channels: channels, pixels: Array((0..<(w * h)).map { _ in px }.joined()))
    }

    @Test func opaqueMarkAtFullOpacityReplacesThePixels() {
        let out = WatermarkCompositor.composite(mark(2, 2, rgb: (200, 100, 50)), onto: canvas(4, 4),
                                                position: .gravity(.northWest), x: 1, y: 1, opacity: 1)
        #expect(out.pixel(x: 1, y: 1) == [200, 100, 50])
        #expect(out.pixel(x: 2, y: 2) == [200, 100, 50])
        #expect(out.pixel(x: 0, y: 0) == [0, 0, 0])
        #expect(out.pixel(x: 3, y: 3) == [0, 0, 0])
    }

    /// Half opacity over an opaque image: `mark × 0.5 + dst × 0.5`, rounded once.
    @Test func halfOpacityIsTheMeanOnOpaqueImages() {
        let out = WatermarkCompositor.composite(mark(1, 1, rgb: (255, 101, 0)), onto: canvas(1, 1, value: 40),
                                                position: .gravity(.center), x: 0, y: 0, opacity: 0.5)
        #expect(out.pixel(x: 0, y: 0) == [148, 71, 20])   // 147.5, 70.5, 20
    }

    /// A translucent mark (alpha 128) at opacity 0.5: effective alpha 64/255.
    @Test func markAlphaAndOpacityMultiply() {
        let out = WatermarkCompositor.composite(mark(1, 1, rgb: (255, 255, 255), alpha: 128), onto: canvas(1, 1, value: 0),
                                                position: .gravity(.center), x: 0, y: 0, opacity: 0.5)
        #expect(out.pixel(x: 0, y: 0) == [64, 64, 64])
    }

    @Test func onTransparentPixelsTheMarkKeepsItsColourAndTakesItsAlpha() {
        // Straight RGBA canvas, fully transparent.
        let out = WatermarkCompositor.composite(mark(1, 1, rgb: (10, 200, 30), alpha: 255),
                                                onto: canvas(1, 1, channels: 4, value: 99, alpha: 0),
                                                position: .gravity(.center), x: 0, y: 0, opacity: 0.5)
        #expect(out.pixel(x: 0, y: 0) == [10, 200, 30, 128])
        #expect(!out.isPremultiplied)
    }

    @Test func straightAndPremultipliedCanvasesAgree() {
        let straight = canvas(1, 1, channels: 4, value: 200, alpha: 100)
        let pre = Alpha.premultiplied(straight)
        let m = mark(1, 1, rgb: (0, 128, 255), alpha: 200)
        let a = WatermarkCompositor.composite(m, onto: straight, position: .gravity(.center), x: 0, y: 0, opacity: 0.7)
        let b = WatermarkCompositor.composite(m, onto: pre, position: .gravity(.center), x: 0, y: 0, opacity: 0.7)
        #expect(b.isPremultiplied)
        let back = Alpha.unpremultiplied(b).pixel(x: 0, y: 0), direct = a.pixel(x: 0, y: 0)
        #expect(back[3] == direct[3])
        for k in 0..<3 { #expect(abs(Int(back[k]) - Int(direct[k])) <= 2, "channel \(k)") }
        // Exact: alpha = 200/255·0.7 + 100/255·(1 − 200/255·0.7) = 0.5490 + 0.1769 → 185.1 → 185.
        #expect(direct[3] == 185)
    }

    @Test func zeroOpacityOrTransparentMarkChangesNothing() throws {
        let image = canvas(3, 3, value: 77)
        let lib = WatermarkLibrary(["a": WatermarkImage(decoded: canvas(2, 2, value: 255), identity: "1")])
        let p = ProcessorFactory(watermarks: lib).processor(for: .watermark(WatermarkOptions(name: "a", opacity: 0)))
        #expect(try p.process(image, context: ProcessingContext(logicalSize: image.size)) == image)
        let out = WatermarkCompositor.composite(mark(2, 2, rgb: (255, 0, 0), alpha: 0), onto: image,
                                                position: .tile, x: 0, y: 0, opacity: 1)
        #expect(out == image)
    }

    /// 10×8 canvas, 2×2 mark, offsets 1 and 1: every compass point.
    @Test(arguments: [
        (Gravity.northWest, 1, 1), (.north, 5, 1), (.northEast, 7, 1),
        (.west, 1, 4), (.center, 5, 4), (.east, 7, 4),
        (.southWest, 1, 5), (.south, 5, 5), (.southEast, 7, 5),
    ])
    func placement(_ gravity: Gravity, _ x: Int, _ y: Int) {
        let o = WatermarkCompositor.origin(canvas: PixelSize(width: 10, height: 8), mark: PixelSize(width: 2, height: 2),
                                           gravity: gravity, x: 1, y: 1)
        #expect(o.x == x && o.y == y, "\(gravity.canonical): \(o)")
    }

    @Test func offsetsGoInwardFromTheNamedEdgesAndMayPushOut() {
        let size = PixelSize(width: 10, height: 10), m = PixelSize(width: 4, height: 4)
        let a = WatermarkCompositor.origin(canvas: size, mark: m, gravity: .southEast, x: 0, y: 0)
        let b = WatermarkCompositor.origin(canvas: size, mark: m, gravity: .southEast, x: -2, y: 3)
        #expect(a.x == 6 && a.y == 6)
        #expect(b.x == 8 && b.y == 3)
        // Clipped at the edge: only the 2×2 on the canvas changes.
        let out = WatermarkCompositor.composite(mark(4, 4, rgb: (255, 255, 255)), onto: canvas(10, 10),
                                                position: .gravity(.southEast), x: -2, y: -2, opacity: 1)
        let white = (0..<10).flatMap { y in (0..<10).map { x in (x, y) } }.filter { out.pixel(x: $0.0, y: $0.1)[0] == 255 }
        #expect(white.count == 4)
        #expect(white.allSatisfy { $0.0 >= 8 && $0.1 >= 8 })
    }

    @Test func tilesRepeatWithTheGap() {
        #expect(WatermarkCompositor.tileStarts(extent: 10, size: 3, gap: 1) == [0, 4, 8])
        #expect(WatermarkCompositor.tileStarts(extent: 9, size: 3, gap: 0) == [0, 3, 6])
        let out = WatermarkCompositor.composite(mark(2, 2, rgb: (255, 255, 255)), onto: canvas(10, 7),
                                                position: .tile, x: 2, y: 1, opacity: 1)
        // Columns 0-1, 4-5, 8-9; rows 0-1, 3-4, 6: 3 × 3 tiles, the last row cut to one line.
        var count = 0
        for y in 0..<7 { for x in 0..<10 where out.pixel(x: x, y: y)[0] == 255 { count += 1 } }
        #expect(count == 3 * 2 * (2 + 2 + 1))
        #expect(out.pixel(x: 2, y: 0)[0] == 0 && out.pixel(x: 4, y: 3)[0] == 255 && out.pixel(x: 0, y: 2)[0] == 0)
    }

    @Test func scaleIsRelativeToTheImageWidthAndUsesTheResampler() throws {
        #expect(Watermark.drawnSize(of: PixelSize(width: 40, height: 20), scale: 0.25, canvas: PixelSize(width: 200, height: 50))
                == PixelSize(width: 50, height: 25))
        #expect(Watermark.drawnSize(of: PixelSize(width: 40, height: 20), scale: 0, canvas: PixelSize(width: 200, height: 50))
                == PixelSize(width: 40, height: 20))
        let lib = WatermarkLibrary(["w": WatermarkImage(decoded: canvas(8, 4, value: 255), identity: "1")])
        let image = canvas(40, 40)
        let p = ProcessorFactory(watermarks: lib).processor(
            for: .watermark(WatermarkOptions(name: "w", position: .gravity(.northWest), scale: 0.5)))
        let out = try p.process(image, context: ProcessingContext(logicalSize: image.size))
        #expect(out.pixel(x: 19, y: 9) == [255, 255, 255])   // 20×10 after scaling
        #expect(out.pixel(x: 20, y: 0) == [0, 0, 0] && out.pixel(x: 0, y: 10) == [0, 0, 0])
    }

    @Test func theFactoryBuildsItAndAnUnknownNameFails() {
        let op = Operation.watermark(WatermarkOptions(name: "logo", opacity: 0.5, position: .tile, x: 3, y: 4, scale: 0.1))
        let lib = WatermarkLibrary(["logo": WatermarkImage(decoded: canvas(2, 2), identity: "abc")])
        #expect(ProcessorFactory(watermarks: lib).processor(for: op).identifier == op.identifier)
        #expect(op.identifier == "watermark:logo:0.5:tile:3:4:0.1")
        let image = canvas(4, 4)
        #expect(throws: ProcessingError.self) {
            try ProcessorFactory().processor(for: op).process(image, context: ProcessingContext(logicalSize: image.size))
        }
    }

    @Test func identityNamesTheDigestsOfTheMarksDrawn() {
        let lib = WatermarkLibrary(["a": WatermarkImage(decoded: canvas(1, 1), identity: "111"),
                                    "b": WatermarkImage(decoded: canvas(1, 1), identity: "222")])
        #expect(lib.identity(for: [.grayscale]) == "")
        #expect(lib.identity(for: [.watermark(WatermarkOptions(name: "b")), .watermark(WatermarkOptions(name: "a"))])
                == "watermarks:a=111,b=222")
    }
}
