import Testing
@testable import KilnModel

@Suite struct ResizePlanTests {
    let photo = PixelSize(width: 4000, height: 3000)

    @Test func fitKeepsAspectInsideTheBox() {
        let p = ResizePlan(options: ResizeOptions(width: 300, height: 300), source: photo)
        #expect(p.output == PixelSize(width: 300, height: 225))
        #expect(p.sourceWidth == 4000 && p.sourceHeight == 3000)
    }

    @Test func fillCoversThenCropsTheCentre() {
        let p = ResizePlan(options: ResizeOptions(width: 300, height: 300, mode: .fill), source: photo)
        #expect(p.output == PixelSize(width: 300, height: 300))
        #expect(abs(p.sourceWidth - 3000) < 0.001 && p.sourceHeight == 3000)
        #expect(abs(p.sourceX - 500) < 0.001 && p.sourceY == 0)
    }

    @Test func forceIgnoresAspect() {
        let p = ResizePlan(options: ResizeOptions(width: 100, height: 400, mode: .force), source: photo)
        #expect(p.output == PixelSize(width: 100, height: 400))
    }

    @Test func zeroKeepsAspect() {
        #expect(ResizePlan(options: ResizeOptions(width: 800, height: 0), source: photo).output == PixelSize(width: 800, height: 600))
        #expect(ResizePlan(options: ResizeOptions(width: 0, height: 300), source: photo).output == PixelSize(width: 400, height: 300))
    }

    @Test func noUpscaleUnlessEnlarge() {
        let small = PixelSize(width: 200, height: 100)
        #expect(ResizePlan(options: ResizeOptions(width: 800, height: 800), source: small).isIdentity(for: small))
        #expect(ResizePlan(options: ResizeOptions(width: 800, height: 800, enlarge: true), source: small).output == PixelSize(width: 800, height: 400))
        // fill without enlarge crops to the box's aspect at the source's scale
        let fill = ResizePlan(options: ResizeOptions(width: 100, height: 100, mode: .fill), source: small)
        #expect(fill.output == PixelSize(width: 100, height: 100))
    }

    /// `auto` (imgproxy's): fill when the image and the box share an orientation, fit otherwise.
    @Test func autoFillsLikeOrientationsAndFitsOthers() {
        let auto = { (w: Int, h: Int, source: PixelSize) in ResizePlan(options: ResizeOptions(width: w, height: h, mode: .auto), source: source).output }
        #expect(auto(300, 200, photo) == PixelSize(width: 300, height: 200))        // both landscape: fill
        #expect(auto(200, 300, photo) == PixelSize(width: 200, height: 150))        // portrait box: fit
        let portrait = PixelSize(width: 3000, height: 4000)
        #expect(auto(200, 300, portrait) == PixelSize(width: 200, height: 300))     // both portrait: fill
        #expect(auto(300, 300, portrait) == PixelSize(width: 225, height: 300))     // square box is landscape: fit
        #expect(auto(300, 0, portrait) == PixelSize(width: 300, height: 400))       // one side: fit
        #expect(ResizeOptions(width: 300, height: 200, mode: .auto, gravity: .north).canonical == "rs:300:200:auto/g:north")
    }
}
