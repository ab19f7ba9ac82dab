import ArgumentParser
import Glibc
import KilnModel
import KilnPOSIX
import KilnProcessing

/// `kiln bench-resample photo.ppm 800 450`: times the resampler's kernels on one resize, runs
/// interleaved (float, portable, AVX2, float, …) so a busy machine slows them alike, each timed
/// in the thread's CPU time (not wall time: a preempted run is not charged for the wait); prints
/// the median and fastest run of each. `scripts/bench`'s `resample` op calls it. A measurement tool:
/// not shown in `kiln --help`.
struct BenchResampleCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench-resample",
        abstract: "Time the resampler's kernels (float, portable, AVX2) on one resize of a binary PPM.",
        shouldDisplay: false)

    @Argument(help: "A binary PPM (P6, 8-bit), e.g. shared/bench/photo_1920x1080_5_8.ppm.")
    var input: String

    @Argument(help: "Output width.")
    var width: Int

    @Argument(help: "Output height.")
    var height: Int

    @Option(help: "Timed runs per kernel.")
    var runs = 21

    @Flag(help: "Add a straight alpha channel (a diagonal ramp) and resample RGBA.")
    var alpha = false

    @Flag(help: "The same alpha, premultiplied.")
    var premultiplied = false

    func run() throws {
        guard width > 0, height > 0, runs > 0 else { throw ValidationError("sizes and runs must be positive") }
        var image = try Self.readPPM(input)
        if alpha || premultiplied { image = Self.withAlpha(image, premultiplied: premultiplied) }
        let plan = ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(image.width), sourceHeight: Double(image.height),
                              output: PixelSize(width: width, height: height))
        var kernels: [ResamplerKernel] = [.float, .portable]
        if ResamplerKernel.cpuHasAVX2 { kernels.append(.avx2) }
        var times = [[Double]](repeating: [], count: kernels.count)
        for run in -1..<runs {          // run -1 warms up
            for (k, kernel) in kernels.enumerated() {
                let resampler = Resampler(kernel: kernel)
                let start = Self.threadCPUMilliseconds()
                let out = resampler.resample(image, plan: plan)
                let elapsed = Self.threadCPUMilliseconds() - start
                precondition(out.size == plan.output)
                if run >= 0 { times[k].append(elapsed) }
            }
        }
        let layout = image.hasAlpha ? (image.isPremultiplied ? "RGBA premultiplied" : "RGBA") : "RGB"
        for (k, kernel) in kernels.enumerated() {
            let sorted = times[k].sorted()
            Output.line("resample \(image.width)x\(image.height) -> \(width)x\(height) \(layout) \(kernel.rawValue): "
                        + "median \(Output.fixed(sorted[sorted.count / 2], 2)) CPU ms, min \(Output.fixed(sorted[0], 2)) (\(runs) runs)")
        }
    }

    static func threadCPUMilliseconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) * 1e3 + Double(t.tv_nsec) / 1e6
    }

    /// A binary PPM: `P6`, width, height, 255, one whitespace byte, RGB bytes.
    static func readPPM(_ path: String) throws -> PixelBuffer {
        let bytes = try Files.read(path)
        var fields = [Int](), i = 2
        guard bytes.count > 2, bytes[0] == UInt8(ascii: "P"), bytes[1] == UInt8(ascii: "6") else {
            throw ValidationError("\(path): not a binary PPM (P6)")
        }
        while fields.count < 3, i < bytes.count {
            while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
            if i < bytes.count, bytes[i] == UInt8(ascii: "#") {
                while i < bytes.count, bytes[i] != 0x0A { i += 1 }
                continue
            }
            var value = 0, digits = 0
            while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, digits < 9 { value = value * 10 + Int(bytes[i] - 0x30); i += 1; digits += 1 }
            guard digits > 0 else { throw ValidationError("\(path): bad PPM header") }
            fields.append(value)
        }
        i += 1
        guard fields.count == 3, fields[0] > 0, fields[1] > 0, fields[2] == 255,
              bytes.count - i >= fields[0] * fields[1] * 3 else { throw ValidationError("\(path): unsupported PPM") }
        return PixelBuffer(width: fields[0], height: fields[1], channels: 3,
                           pixels: Array(bytes[i..<(i + fields[0] * fields[1] * 3)]))
    }

    static func withAlpha(_ image: PixelBuffer, premultiplied: Bool) -> PixelBuffer {
        var out = [UInt8](repeating: 0, count: image.width * image.height * 4)
        for y in 0..<image.height {
            for x in 0..<image.width {
                let s = (y * image.width + x) * 3, d = (y * image.width + x) * 4
                let a = (x + y) * 255 / (image.width + image.height)
                for c in 0..<3 {
                    let v = Int(image.pixels[s + c])
                    out[d + c] = UInt8(premultiplied ? (v * a + 127) / 255 : v)
                }
                out[d + 3] = UInt8(a)
            }
        }
        return PixelBuffer(width: image.width, height: image.height, channels: 4, isPremultiplied: premultiplied, pixels: out)
    }
}
