import KilnModel
import Testing
@testable import KilnProcessing

@Suite struct ResamplerTests {
    let resampler = Resampler()

    static func plan(_ source: PixelBuffer, _ w: Int, _ h: Int) -> ResizePlan {
        ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(source.width),
                   sourceHeight: Double(source.height), output: PixelSize(width: w, height: h))
    }

    /// A downscaled linear gradient matches the gradient sampled at the output pixel centres.
    /// Pixels whose kernel reaches past the image edge are left out (edge clamping bends the
    /// gradient there, as it should).
    @Test(arguments: [(200, 100), (128, 64), (300, 150), (97, 41)])
    func downscaledGradientMatchesTheAnalyticGradient(width: Int, height: Int) {
        let sw = 512, sh = 256
        let source = TestImages.rgb(width: sw, height: sh) { x, y in
            (Double(x) * 255 / Double(sw - 1), Double(y) * 255 / Double(sh - 1),
             Double(x + y) * 255 / Double(sw + sh - 2))
        }
        let out = resampler.resample(source, plan: Self.plan(source, width, height))
        #expect(out.size == PixelSize(width: width, height: height))
        let scaleX = Double(sw) / Double(width), scaleY = Double(sh) / Double(height)
        // Output pixel i reads source centre ± 3 × scale: the first and last 3 reach the edge.
        let marginX = 4, marginY = 4
        var worst = 0.0
        for oy in marginY..<(height - marginY) {
            for ox in marginX..<(width - marginX) {
                let u = (Double(ox) + 0.5) * scaleX - 0.5    // source pixel-index coordinates
                let v = (Double(oy) + 0.5) * scaleY - 0.5
                let expected = [u * 255 / Double(sw - 1), v * 255 / Double(sh - 1),
                                (u + v) * 255 / Double(sw + sh - 2)]
                let p = out.pixel(x: ox, y: oy)
                for c in 0..<3 { worst = max(worst, abs(Double(p[c]) - expected[c])) }
            }
        }
        #expect(worst <= 1.0, "largest error \(worst)")
    }

    /// Normalised weights: a flat colour stays exactly flat, down, up and through a crop.
    @Test(arguments: [[37, 200, 255], [0, 0, 0], [255, 255, 255], [37, 200, 255, 128],
                      [10, 20, 30, 255], [255, 255, 255, 1]] as [[UInt8]])
    func constantColourStaysExactlyConstant(colour: [UInt8]) {
        let source = TestImages.constant(width: 97, height: 61, colour)
        let plans = [
            Self.plan(source, 30, 20),
            Self.plan(source, 200, 150),
            Self.plan(source, 1, 1),
            ResizePlan(sourceX: 10.3, sourceY: 5.7, sourceWidth: 40.2, sourceHeight: 33.3,
                       output: PixelSize(width: 17, height: 41)),
        ]
        for plan in plans {
            let out = resampler.resample(source, plan: plan)
            #expect(out.size == plan.output)
            #expect(out.channels == colour.count)
            let expected = TestImages.constant(width: out.width, height: out.height, colour)
            #expect(out.pixels == expected.pixels, "plan \(plan)")
        }
    }

    /// Antialiasing: one-pixel black and white stripes, far above the output's Nyquist limit,
    /// must average to an even grey instead of aliasing into bands.
    @Test(arguments: [4.0, 3.3, 2.5])
    func fineStripesAverageToGrey(factor: Double) {
        let source = TestImages.rgb(width: 400, height: 8) { x, _ in
            x % 2 == 0 ? (0, 0, 0) : (255, 255, 255)
        }
        let width = Int((400 / factor).rounded())
        let out = resampler.resample(source, plan: Self.plan(source, width, 2))
        let reds = (3..<(width - 3)).map { Int(out.pixel(x: $0, y: 0)[0]) }
        #expect(reds.allSatisfy { abs($0 - 128) <= 6 }, "\(reds.min()!)...\(reds.max()!)")
    }

    /// A hard black-to-white step rings under Lanczos; the overshoot must clamp to 255 and the
    /// undershoot to 0, not wrap around.
    @Test(arguments: [(64, 8), (160, 8), (13, 8)])
    func ringingIsClampedNotWrapped(width: Int, height: Int) {
        let source = TestImages.rgb(width: 40, height: 8) { x, _ in
            x < 20 ? (0, 0, 0) : (255, 255, 255)
        }
        let out = resampler.resample(source, plan: Self.plan(source, width, height))
        for y in 0..<height {
            for x in 0..<width {
                let centre = (Double(x) + 0.5) * 40 / Double(width)
                let value = out.pixel(x: x, y: y)[0]
                // Away from the step the colour is exact; on each side it stays on its side.
                if centre < 20 - 4 * max(40 / Double(width), 1) { #expect(value == 0, "x \(x)") }
                if centre > 20 + 4 * max(40 / Double(width), 1) { #expect(value == 255, "x \(x)") }
                if centre < 19 { #expect(value < 128, "dark side x \(x): \(value)") }
                if centre > 21 { #expect(value > 128, "light side x \(x): \(value)") }
            }
        }
        // Upscaling overshoots: the row must reach both clamps.
        if width > 40 {
            let row = (0..<width).map { out.pixel(x: $0, y: 0)[0] }
            #expect(row.min() == 0 && row.max() == 255)
        }
    }

    /// A white opaque disc on transparent black, downscaled 4×: no dark fringe, because the
    /// resampler premultiplies before filtering and unpremultiplies after.
    @Test(arguments: [4.0, 3.3])
    func noDarkFringeAroundOpaqueShapes(factor: Double) {
        let source = TestImages.disc(size: 128, radius: 40)
        let size = Int((128 / factor).rounded())
        let out = resampler.resample(source, plan: Self.plan(source, size, size))
        #expect(out.channels == 4 && !out.isPremultiplied)
        var partial = 0
        for i in stride(from: 0, to: out.pixels.count, by: 4) where out.pixels[i + 3] > 0 {
            let (r, g, b, a) = (out.pixels[i], out.pixels[i + 1], out.pixels[i + 2], out.pixels[i + 3])
            #expect(r >= 250 && g >= 250 && b >= 250, "pixel \(i / 4): \(r) \(g) \(b) \(a)")
            if a < 255 { partial += 1 }
        }
        #expect(partial > 8, "the edge must be antialiased")
        // The centre stays opaque white, the corners transparent.
        #expect(out.pixel(x: size / 2, y: size / 2) == [255, 255, 255, 255])
        #expect(out.pixel(x: 0, y: 0)[3] == 0)
    }

    /// Premultiplied input is filtered as it is and stays premultiplied, colour never above alpha.
    @Test func premultipliedInputStaysPremultiplied() {
        var source = TestImages.disc(size: 64, radius: 20)
        source.isPremultiplied = true
        let out = resampler.resample(source, plan: Self.plan(source, 16, 16))
        #expect(out.isPremultiplied)
        for i in stride(from: 0, to: out.pixels.count, by: 4) {
            let a = out.pixels[i + 3]
            #expect(out.pixels[i] <= a && out.pixels[i + 1] <= a && out.pixels[i + 2] <= a)
            #expect(Int(out.pixels[i]) >= Int(a) - 1, "white stays white: colour tracks alpha")
        }
    }

    @Test func identityPlanReturnsTheSameBuffer() {
        let source = TestImages.noise(width: 33, height: 17, channels: 3)
        #expect(resampler.resample(source, plan: Self.plan(source, 33, 17)) == source)
    }

    /// An axis left alone is copied exactly: a one-row RGBA image stretched vertically gives
    /// the same row on every output row (fully transparent pixels come out transparent black;
    /// colour at alpha below 8 within 3, see `kiln_resample.h`).
    @Test func untouchedAxisIsCopiedExactly() {
        let row = TestImages.noise(width: 40, height: 1, channels: 4, seed: 7)
        let widened = resampler.resample(row, plan: Self.plan(row, 40, 5))
        #expect(widened.size == PixelSize(width: 40, height: 5))
        for y in 0..<5 {
            for x in 0..<40 {
                let p = row.pixel(x: x, y: 0)
                let q = widened.pixel(x: x, y: y)
                #expect(q[3] == p[3])
                if p[3] == 0 {
                    #expect(q == [0, 0, 0, 0])
                } else if p[3] >= 8 {
                    // Premultiplied (7 extra bits) and back: the colour survives exactly.
                    #expect(q == p, "x \(x): \(q) vs \(p)")
                } else {
                    // Alpha 1…7: premultiplied colour keeps 6 fractional bits, so dividing by
                    // alpha again is exact to about 3 / alpha (the float path was exact here).
                    for c in 0..<3 { #expect(abs(Int(q[c]) - Int(p[c])) <= 3, "x \(x): \(q) vs \(p)") }
                }
            }
        }
    }

    /// A single pixel upscaled fills the output with its colour; a one-pixel-wide image works.
    @Test func tinySources() {
        let dot = TestImages.constant(width: 1, height: 1, [9, 99, 199])
        let big = resampler.resample(dot, plan: Self.plan(dot, 10, 7))
        #expect(big.pixels == TestImages.constant(width: 10, height: 7, [9, 99, 199]).pixels)
        let column = TestImages.rgb(width: 1, height: 50) { _, y in (Double(y) * 5, 0, 0) }
        let shrunk = resampler.resample(column, plan: Self.plan(column, 1, 10))
        #expect(shrunk.size == PixelSize(width: 1, height: 10))
        let reds = (0..<10).map { shrunk.pixel(x: 0, y: $0)[0] }
        #expect(reds == reds.sorted(), "a ramp stays increasing: \(reds)")
    }
}
