import KilnFuzzProbes
import KilnModel
import Testing
@testable import KilnProcessing

/// CKilnResample's fixed-point kernel against the float reference, on synthetic images and the
/// extreme shapes: the portable and AVX2 paths agree bit for bit (same integer arithmetic), and
/// both stay within 2 per channel of the float path (colour compared premultiplied for straight
/// RGBA, see `ResampleComparison`).
@Suite struct FixedPointResamplerTests {
    static let reference = Resampler(kernel: .float)
    static let portable = Resampler(kernel: .portable)
    static let avx2 = Resampler(kernel: .avx2)

    /// Source size → output size, and the crop of `ResamplerTests` (fractional origin).
    static let plans: [(PixelSize, ResizePlan)] = ([
        (97, 61, 1, 1),        // one-pixel output
        (1, 300, 1, 37), (300, 1, 77, 1), (1, 40, 9, 3), (40, 1, 3, 9), (1, 1, 64, 64),
        (97, 61, 33, 21),      // odd widths
        (101, 59, 13, 7),
        (31, 17, 248, 136),    // upscale ×8
        (3, 2, 65535, 1),      // very wide output
        (1201, 5, 799, 3),
        (200, 150, 200, 75),   // one axis copied
        (64, 64, 8, 8),
        (40, 900, 7, 3),       // 900-tap vertical windows (the AVX2 pass's long-window branch)
    ] as [(Int, Int, Int, Int)]).map { (sw, sh, ow, oh) in
        (PixelSize(width: sw, height: sh),
         ResizePlan(sourceX: 0, sourceY: 0, sourceWidth: Double(sw), sourceHeight: Double(sh),
                    output: PixelSize(width: ow, height: oh)))
    } + [
        (PixelSize(width: 97, height: 61),
         ResizePlan(sourceX: 10.3, sourceY: 5.7, sourceWidth: 40.2, sourceHeight: 33.3,
                    output: PixelSize(width: 17, height: 41))),
    ]

    /// Noise (the hardest case for ringing and rounding) and a smooth image, RGB, straight and
    /// premultiplied RGBA.
    static func sources(_ size: PixelSize, seed: UInt64) -> [PixelBuffer] {
        let rgb = TestImages.noise(width: size.width, height: size.height, channels: 3, seed: seed)
        let rgba = TestImages.noise(width: size.width, height: size.height, channels: 4, seed: seed)
        let smooth = TestImages.rgb(width: size.width, height: size.height) { x, y in
            (Double(x * 255 / max(size.width - 1, 1)), Double(y * 255 / max(size.height - 1, 1)), 128)
        }
        return [rgb, rgba, rgba.premultiplied, smooth]
    }

    /// Without AVX2 the AVX2 choice runs the portable path and the comparison would prove
    /// nothing: the test is then reported as skipped, not passed.
    @Test(.enabled(if: ResamplerKernel.cpuHasAVX2, "this CPU has no AVX2: nothing to compare the portable path with"),
          arguments: 0..<plans.count)
    func portableAndAVX2AgreeBitForBit(index: Int) {
        let (size, plan) = Self.plans[index]
        for (i, source) in Self.sources(size, seed: UInt64(index + 1)).enumerated() {
            let a = Self.portable.resample(source, plan: plan)
            let b = Self.avx2.resample(source, plan: plan)
            #expect(a.size == plan.output && b.size == plan.output)
            #expect(a.pixels == b.pixels, "source \(i), \(size) → \(plan.output)")
        }
    }

    @Test(arguments: 0..<plans.count)
    func withinTwoOfTheFloatReference(index: Int) {
        let (size, plan) = Self.plans[index]
        for (i, source) in Self.sources(size, seed: UInt64(index + 7)).enumerated() {
            let expected = Self.reference.resample(source, plan: plan)
            for resampler in [Self.portable, Self.avx2] {
                let got = resampler.resample(source, plan: plan)
                #expect(got.isPremultiplied == expected.isPremultiplied)
                let comparison = ResampleComparison(got, expected)
                #expect(comparison.worstDifference <= 2,
                        "\(resampler.kernel) source \(i), \(size) → \(plan.output): \(comparison)")
            }
        }
    }

    /// Quantised weights keep a flat colour flat: every row sums to exactly 1 << 14.
    @Test func fixedPointRowsSumToOne() {
        for (size, plan) in Self.plans {
            let table = WeightTable(sourceLength: size.width, origin: plan.sourceX,
                                    extent: plan.sourceWidth, outputLength: plan.output.width)
            let weights = table.fixedPointWeights
            for i in 0..<table.count {
                let row = weights[(i * table.taps)..<((i + 1) * table.taps)]
                #expect(row.reduce(0) { $0 + Int($1) } == 1 << WeightTable.fixedPointBits)
            }
        }
    }

    /// On this machine's CPU the AVX2 choice runs AVX2; without AVX2 it runs the portable path.
    @Test func avx2ChoiceResolvesByCPU() {
        #expect(ResamplerKernel.avx2.resolved == (ResamplerKernel.cpuHasAVX2 ? .avx2 : .portable))
        #expect(ResamplerKernel.portable.resolved == .portable)
        #expect(ResamplerKernel.float.resolved == nil)
        // The default: the fixed-point kernel on every CPU (AVX2 where it runs: the same bytes).
        #expect(ResamplerKernel.automatic.resolved == (ResamplerKernel.cpuHasAVX2 ? .avx2 : .portable))
    }
}

/// `ResamplerProbe` (the `FuzzResample` harness's check) over deterministic random inputs: every
/// layout, crops, wide and tall outputs.
@Suite struct ResamplerProbeTests {
    @Test func randomInputsStayWithinTheTolerance() {
        var state: UInt64 = 29
        var worst = 0
        var layouts = Set<Int>()
        for _ in 0..<400 {
            let count = 10 + Int(state % 200)
            var bytes = [UInt8]()
            for _ in 0..<count {
                state = state &* 6364136223846793005 &+ 1442695040888963407
                bytes.append(UInt8(truncatingIfNeeded: state >> 56))
            }
            guard let summary = ResamplerProbe.check(bytes) else { continue }
            worst = max(worst, summary.maxDifference)
            layouts.insert(summary.channels)
        }
        #expect(worst <= ResamplerProbe.tolerance)
        #expect(layouts == [3, 4])
    }
}
