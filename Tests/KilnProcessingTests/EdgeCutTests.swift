import KilnModel
import Testing
@testable import KilnProcessing

/// `cut:<t>:<r>:<b>:<l>[:<w>:<h>]` (`EdgeCut`, carried by `CropOptions.edges`): parsed, spelled,
/// cut by `Crop` from the size at its step, refused when nothing is left.
@Suite struct EdgeCutTests {
    /// 6×4 RGB whose pixel (x, y) is (x, y, 7).
    static let grid = TestImages.rgb(width: 6, height: 4) { x, y in (Double(x), Double(y), 7) }

    func cut(_ edges: EdgeCut, _ image: PixelBuffer = grid) throws(ProcessingError) -> PixelBuffer {
        try Crop(CropOptions(edges: edges)).process(image, context: PixelStats.context(image))
    }

    @Test func eachEdgeIsCut() throws {
        let out = try cut(EdgeCut(top: 1, right: 2, bottom: 0, left: 1))
        #expect(out.size == PixelSize(width: 3, height: 3))
        #expect(out.pixel(x: 0, y: 0) == [1, 1, 7])
        #expect(out.pixel(x: 2, y: 2) == [3, 3, 7])
    }

    @Test func aKeptSizeReplacesTheFarCut() throws {
        let out = try cut(EdgeCut(top: 1, right: 0, bottom: 0, left: 2, width: 3, height: 100))
        #expect(out.size == PixelSize(width: 3, height: 3))
        #expect(out.pixel(x: 0, y: 0) == [2, 1, 7])
    }

    @Test(arguments: [EdgeCut(top: 0, right: 3, bottom: 0, left: 3), EdgeCut(top: 4, right: 0, bottom: 0, left: 0),
                      EdgeCut(top: 0, right: 0, bottom: 0, left: 6, width: 1, height: 0)])
    func nothingLeftIsRefused(edges: EdgeCut) {
        #expect {
            try cut(edges)
        } throws: { error in
            guard case ProcessingError.invalidArgument(let option, let reason) = error else { return false }
            return option == "cut" && reason.contains("leaves nothing")
        }
    }

    @Test func cutsAreLogicalPixelsOfAShrunkInput() throws {
        let input = TestImages.rgb(width: 100, height: 100) { x, y in (Double(x), Double(y), 0) }
        let out = try Crop(CropOptions(edges: EdgeCut(top: 50, right: 0, bottom: 0, left: 100)))
            .process(input, context: ProcessingContext(logicalSize: PixelSize(width: 200, height: 200)))
        #expect(out.size == PixelSize(width: 50, height: 75))
        #expect(out.pixel(x: 0, y: 0) == [50, 25, 0])
    }

    @Test func theOptionParsesAndSpellsItself() throws {
        let parser = SpecParser()
        let r = try parser.parse("/cut:1:2:3:4/w:300/cat.jpg", isDecoded: true)
        #expect(r.operations.first == .crop(CropOptions(edges: EdgeCut(top: 1, right: 2, bottom: 3, left: 4))))
        #expect(r.canonical.hasPrefix("cut:1:2:3:4/"))
        #expect(try parser.parse("/" + r.canonical, isDecoded: true) == r)
        let kept = try parser.parse("/cut:1:0:0:4:10:20/cat.jpg", isDecoded: true)
        #expect(kept.canonical.hasPrefix("cut:1:0:0:4:10:20/"))
        #expect(OptionCatalog.declaration(of: kept.operations[0])?.operation == "crop")
        for bad in ["/cut:1:2:3/cat.jpg", "/cut:1:2:3:4:5/cat.jpg", "/cut:-1:0:0:0/cat.jpg", "/cut:0:5:0:0:10:0/cat.jpg", "/cut:a:0:0:0/cat.jpg"] {
            #expect(throws: SpecError.self, "\(bad)") { try parser.parse(bad, isDecoded: true) }
        }
    }
}
