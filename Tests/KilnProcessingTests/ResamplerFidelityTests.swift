import Foundation
import KilnCodecs
import KilnModel
import Testing
@testable import KilnProcessing

/// The fixed-point kernel against the float reference on real photos (`shared/bench` and
/// `shared/corpus`): SSIM ≥ 0.99 per channel and at most 2 apart per channel, for RGB, RGBA
/// (straight, and premultiplied). Prints one
/// `FIDELITY` line per case with the figures.
@Suite struct ResamplerFidelityTests {
    static let shared = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared")

    /// File (under shared/), output width (height follows the aspect ratio).
    static let cases: [(String, Int)] = [
        ("bench/photo_1920x1080.jpg", 800),
        ("bench/alpha_1920x1080.png", 400),
        ("bench/photo_1920x1080.webp", 300),
        ("corpus/pillow_hopper.jpg", 37),
        ("corpus/pillow_hopper.jpg", 1000),        // upscale ×8
        ("corpus/pillow_hopper_gray.jpg", 50),
        ("corpus/pillow_transparent.webp", 77),
        ("corpus/pngsuite_basn4a16.png", 13),
        ("corpus/pngsuite_basn2c08.png", 255),
        ("corpus/exif_Portrait_6.jpg", 301),
        ("corpus/pillow_flower2.webp", 123),
        ("corpus/ljt_testorig.jpg", 1),
    ]

    static func decode(_ file: String) throws -> PixelBuffer {
        let url = shared.appendingPathComponent(file)
        let data = [UInt8](try Data(contentsOf: url))
        let format = try #require(ImageFormat(fileExtension: url.pathExtension))
        return try Codecs.decoder(for: format).decode(data, options: DecodeOptions()).buffer
    }

    static func plan(_ image: PixelBuffer, width: Int) -> ResizePlan {
        let height = max(1, Int((Double(image.height) * Double(width) / Double(image.width)).rounded()))
        return ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(image.width), sourceHeight: Double(image.height),
                          output: PixelSize(width: width, height: height))
    }

    static func check(_ name: String, _ comparison: ResampleComparison) {
        print("FIDELITY \(name): \(comparison)")
        #expect(comparison.worstSSIM >= 0.99, "\(name): \(comparison)")
        #expect(comparison.worstDifference <= 2, "\(name): \(comparison)")
    }

    @Test(arguments: 0..<cases.count)
    func photoMatchesTheFloatReference(index: Int) throws {
        let (file, width) = Self.cases[index]
        let image = try Self.decode(file)
        let plan = Self.plan(image, width: width)
        var inputs = [image]
        if image.hasAlpha { inputs.append(image.premultiplied) }
        for input in inputs {
            let expected = Resampler(kernel: .float).resample(input, plan: plan)
            for kernel in [ResamplerKernel.portable, .avx2] {
                let got = Resampler(kernel: kernel).resample(input, plan: plan)
                let layout = input.hasAlpha ? (input.isPremultiplied ? "RGBA premultiplied" : "RGBA") : "RGB"
                Self.check("\(file) → \(plan.output.width)×\(plan.output.height) \(layout) \(kernel)",
                           ResampleComparison(got, expected))
            }
        }
    }
}
