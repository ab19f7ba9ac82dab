import Foundation
import KilnModel
import KilnProcessing
import Testing

/// Timings of the hot paths, printed, never asserted (run with `KILN_BENCH=1`, in release:
/// `KILN_BENCH=1 swift test -c release --filter ResamplerBenchmark`). Serialised: parallel runs
/// would time each other.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["KILN_BENCH"] != nil))
struct ResamplerBenchmarkTests {
    /// Runs `body` `runs` times; returns the fastest and the median run in milliseconds.
    static func measure(runs: Int = 15, _ body: () throws -> PixelBuffer) rethrows -> (PixelBuffer, Double, Double) {
        var times = [Double]()
        var last: PixelBuffer?
        let clock = ContinuousClock()
        for _ in 0..<runs {
            var result: PixelBuffer?
            let elapsed = try clock.measure { result = try body() }
            last = result
            times.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1e3)
        }
        times.sort()
        return (last!, times[0], times[times.count / 2])
    }

    static func report(_ name: String, _ min: Double, _ median: Double) {
        print(String(format: "BENCH %-44@ min %7.2f ms  median %7.2f ms", name as NSString, min, median))
    }

    @Test(arguments: [
        ("4000x3000 (decoded 1/8: 500x375) RGB fit 300x300", 500, 375, 3, PixelSize(width: 4000, height: 3000), 300, 300),
        ("1920x1080 RGB fit 800x800", 1920, 1080, 3, PixelSize(width: 1920, height: 1080), 800, 800),
        ("1920x1080 RGBA w 400", 1920, 1080, 4, PixelSize(width: 1920, height: 1080), 400, 0),
        ("4000x3000 RGB (full decode) fit 300x300", 4000, 3000, 3, PixelSize(width: 4000, height: 3000), 300, 300),
        ("1920x1080 RGB fill 300x300 enlarge", 1920, 1080, 3, PixelSize(width: 1920, height: 1080), 300, 300),
        ("640x480 RGB fit 1280x1280 enlarge (upscale)", 640, 480, 3, PixelSize(width: 640, height: 480), 1280, 1280),
    ])
    func resize(name: String, width: Int, height: Int, channels: Int, logical: PixelSize, w: Int, h: Int) throws {
        let input = TestImages.noise(width: width, height: height, channels: channels)
        let enlarge = name.contains("enlarge")
        let resize = Resize(width: w, height: h, mode: name.contains("fill") ? .fill : .fit, enlarge: enlarge)
        let context = ProcessingContext(logicalSize: logical)
        let (out, min, median) = try Self.measure { try resize.process(input, context: context) }
        #expect(out.width > 0 && out.height > 0)
        Self.report("\(name) -> \(out.size)", min, median)
    }

    @Test func otherStages() {
        let photo = TestImages.noise(width: 4000, height: 3000, channels: 3)
        let (r, rMin, rMed) = Self.measure(runs: 5) { Orientation.rotate90.apply(to: photo) }
        #expect(r.size == PixelSize(width: 3000, height: 4000))
        Self.report("rotate90 4000x3000 RGB", rMin, rMed)
        let alpha = TestImages.noise(width: 1920, height: 1080, channels: 4)
        let (f, fMin, fMed) = Self.measure { Flatten.white.apply(to: alpha) }
        #expect(f.channels == 3)
        Self.report("flatten 1920x1080 RGBA", fMin, fMed)
        let (_, oMin, oMed) = Self.measure { _ = Alpha.isOpaque(alpha); return alpha }
        Self.report("isOpaque 1920x1080 (early exit)", oMin, oMed)
        let opaque = TestImages.constant(width: 1920, height: 1080, [1, 2, 3, 255])
        let (_, pMin, pMed) = Self.measure { #expect(Alpha.isOpaque(opaque)); return opaque }
        Self.report("isOpaque 1920x1080 (full scan)", pMin, pMed)
    }
}
