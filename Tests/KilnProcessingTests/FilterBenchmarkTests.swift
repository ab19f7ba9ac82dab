import Foundation
import KilnModel
import KilnProcessing
import Testing

/// Timings of the processors on a 1000×667 photo-sized image, printed, never asserted (run with
/// `KILN_BENCH=1 swift test -c release --filter FilterBenchmark`).
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment["KILN_BENCH"] != nil))
struct FilterBenchmarkTests {
    static let rgb = TestImages.noise(width: 1000, height: 667, channels: 3)
    static let rgba = TestImages.noise(width: 1000, height: 667, channels: 4)
    static let context = ProcessingContext(logicalSize: PixelSize(width: 1000, height: 667))

    @Test func processors() throws {
        let cases: [(String, PixelBuffer, any ImageProcessing)] = [
            ("blur sigma 1.5 RGB", Self.rgb, GaussianBlur(sigma: 1.5)),
            ("blur sigma 5 RGB", Self.rgb, GaussianBlur(sigma: 5)),
            ("blur sigma 5 RGBA", Self.rgba, GaussianBlur(sigma: 5)),
            ("blur sigma 50 RGB", Self.rgb, GaussianBlur(sigma: 50)),
            ("sharpen sigma 1 RGB", Self.rgb, Sharpen(sigma: 1)),
            ("crop 500x500 smart RGB", Self.rgb, Crop(CropOptions(width: 500, height: 500, gravity: .smart))),
            ("fill 300x300 smart RGB", Self.rgb, {
                var o = ResizeOptions(width: 300, height: 300, mode: .fill); o.gravity = .smart; return Resize(o)
            }()),
            ("fill 300x300 centre RGB", Self.rgb, Resize(ResizeOptions(width: 300, height: 300, mode: .fill))),
            ("circle RGB", Self.rgb, Circle()),
            ("rounded 40 RGBA", Self.rgba, RoundedCorners(radius: 40)),
            ("saturation 50 RGB", Self.rgb, ColorFilter.saturation(50)),
            ("pad 20 RGB", Self.rgb, Pad(Padding(top: 20, right: 20, bottom: 20, left: 20))),
        ]
        for (name, image, processor) in cases {
            let (out, min, median) = try ResamplerBenchmarkTests.measure(runs: 9) {
                try processor.process(image, context: Self.context)
            }
            #expect(out.pixelCount > 0)
            ResamplerBenchmarkTests.report("\(name) 1000x667", min, median)
        }
        let (_, sMin, sMed) = ResamplerBenchmarkTests.measure(runs: 9) { () -> PixelBuffer in
            _ = SmartCrop.origin(in: Self.rgb, width: 500, height: 500)
            return Self.rgb
        }
        ResamplerBenchmarkTests.report("SmartCrop.origin only 1000x667", sMin, sMed)
    }
}
