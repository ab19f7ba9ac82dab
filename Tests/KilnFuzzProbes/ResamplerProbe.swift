import KilnModel
import KilnProcessing

/// The resampler check the `FuzzResample` harness (Fuzz/) and the unit tests run: one small
/// image and resize read from arbitrary bytes, through the fixed-point kernel's portable and AVX2
/// paths and the float reference. Not part of the shipped targets (`KilnFuzzProbes`); the
/// kernel's types it calls are `package` in KilnProcessing.
public enum ResamplerProbe {
    /// Largest difference per channel the fixed-point kernel may have from the float reference
    /// (straight RGBA: colour compared premultiplied, c × a / 255).
    public static let tolerance = 2

    /// What one input checked.
    public struct Summary: Sendable, Equatable {
        public var source: PixelSize
        public var output: PixelSize
        public var channels: Int
        /// Largest difference from the float reference over all channels.
        public var maxDifference: Int
    }

    /// Byte 0: source width - 1 (mod 48); 1: source height - 1 (mod 48); 2, 3: output width and
    /// height - 1 (mod 96; byte 4's bit 0 makes the width up to 2048 instead, bit 1 without
    /// bit 0 the height);
    /// byte 4 bits 2–3: layout (grey as RGB, RGB, straight RGBA, premultiplied RGBA); bit 4: a crop
    /// with a fractional origin (bytes 5–8); the rest, repeated, are the pixels.
    /// Stops the process (`precondition`) when the paths disagree or exceed the tolerance.
    @discardableResult
    public static func check(_ bytes: [UInt8]) -> Summary? {
        guard bytes.count >= 10 else { return nil }
        let sw = Int(bytes[0]) % 48 + 1, sh = Int(bytes[1]) % 48 + 1
        let flags = bytes[4]
        let ow = flags & 1 != 0 ? Int(bytes[2]) * 8 + 1 : Int(bytes[2]) % 96 + 1
        // Wide or tall, not both (a 2041 × 2041 output runs for seconds under ASan).
        let oh = flags & 3 == 2 ? Int(bytes[3]) * 8 + 1 : Int(bytes[3]) % 96 + 1
        let layout = Int(flags >> 2) & 3
        let channels = [3, 3, 4, 4][layout]
        var plan = ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(sw), sourceHeight: Double(sh),
                              output: PixelSize(width: ow, height: oh))
        if flags & 16 != 0 {
            let x = Double(bytes[5]) / 256 * Double(sw), y = Double(bytes[6]) / 256 * Double(sh)
            let w = max(Double(bytes[7]) / 256 * (Double(sw) - x), 0.25)
            let h = max(Double(bytes[8]) / 256 * (Double(sh) - y), 0.25)
            plan = ResizePlan(sourceX: x, sourceY: y, sourceWidth: w, sourceHeight: h, output: plan.output)
        }
        let payload = bytes[9...]
        var pixels = [UInt8](repeating: 0, count: sw * sh * channels)
        for i in pixels.indices { pixels[i] = payload[payload.startIndex + i % payload.count] }
        if layout == 0 {                          // grey: R = G = B
            for i in stride(from: 0, to: pixels.count, by: 3) { pixels[i + 1] = pixels[i]; pixels[i + 2] = pixels[i] }
        }
        if layout == 3 {                         // premultiplied: colour at most alpha
            for i in stride(from: 0, to: pixels.count, by: 4) {
                for c in 0..<3 { pixels[i + c] = UInt8(Int(pixels[i + c]) * Int(pixels[i + 3]) / 255) }
            }
        }
        let image = PixelBuffer(width: sw, height: sh, channels: channels,
                                isPremultiplied: layout == 3, pixels: pixels)
        let reference = Resampler(kernel: .float).resample(image, plan: plan)
        let portable = Resampler(kernel: .portable).resample(image, plan: plan)
        let avx2 = Resampler(kernel: .avx2).resample(image, plan: plan)
        precondition(portable.pixels == avx2.pixels, "portable and AVX2 paths differ")
        precondition(portable.size == plan.output && reference.size == plan.output, "wrong output size")
        var worst = 0
        let n = plan.output.width * plan.output.height
        let c = image.channels
        let straight = layout == 2
        func value(_ p: [UInt8], _ i: Int, _ ch: Int) -> Int {
            let v = Int(p[i * c + ch])
            return straight && ch < 3 ? (v * Int(p[i * c + 3]) + 127) / 255 : v
        }
        for i in 0..<n {
            for ch in 0..<c {
                worst = max(worst, abs(value(portable.pixels, i, ch) - value(reference.pixels, i, ch)))
            }
        }
        precondition(worst <= tolerance, "fixed point \(worst) from the float reference: \(image.size) → \(plan)")
        return Summary(source: image.size, output: plan.output, channels: channels, maxDifference: worst)
    }
}
