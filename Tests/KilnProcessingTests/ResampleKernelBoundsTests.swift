import CKilnResample
import Testing

/// The C kernel's argument checks (`kiln_resample_u8`): weights whose row adds up to more than
/// 2.0 in absolute value and sides beyond 2^24 are refused before a byte is read; at the bound
/// itself the sums stay in range (a white image through weights of 2.0 stays white, clamped).
@Suite struct ResampleKernelBoundsTests {
    /// Resamples a 2×2 white RGB image to 1×1 through one axis of `weights` each way; the status.
    static func run(weights: [Int16], srcWidth: Int32 = 2, path: Int32 = Int32(KILN_RESAMPLE_PORTABLE)) -> (Int32, [UInt8]) {
        let src = [UInt8](repeating: 255, count: 2 * 2 * 3)
        var dst = [UInt8](repeating: 7, count: 3)
        let starts: [Int32] = [0]
        let status = src.withUnsafeBufferPointer { s in
            dst.withUnsafeMutableBufferPointer { d in
                starts.withUnsafeBufferPointer { st in
                    weights.withUnsafeBufferPointer { w in
                        var h = kiln_resample_axis(count: 1, taps: Int32(weights.count), starts: st.baseAddress, weights: w.baseAddress)
                        var v = h
                        return kiln_resample_u8(s.baseAddress, srcWidth, 2, 3, Int32(KILN_RESAMPLE_ALPHA_NONE), &h, &v, d.baseAddress, path)
                    }
                }
            }
        }
        return (status, dst)
    }

    @Test(arguments: [Int32(KILN_RESAMPLE_PORTABLE), Int32(KILN_RESAMPLE_AVX2)])
    func weightsUpToTwoRunAndStayInRange(path: Int32) {
        let one = Int16(1 << KILN_RESAMPLE_WEIGHT_BITS)
        let (status, out) = Self.run(weights: [one, one], path: path)   // 2.0: the bound
        #expect(status == Int32(KILN_RESAMPLE_PORTABLE) || status == Int32(KILN_RESAMPLE_AVX2))
        #expect(out == [255, 255, 255])
        let (negative, dark) = Self.run(weights: [-one, one], path: path)   // |w| adds up to 2.0 too
        #expect(negative >= 0 && dark == [0, 0, 0])
    }

    @Test func weightsBeyondTwoAreRefused() {
        let one = Int16(1 << KILN_RESAMPLE_WEIGHT_BITS)
        #expect(Self.run(weights: [one, one + 1]).0 == -1)
        #expect(Self.run(weights: [Int16.max, Int16.max]).0 == -1)   // 4.0, accepted before
        #expect(Self.run(weights: [-one, -one - 1]).0 == -1)
    }

    @Test func sidesBeyondTheCapAreRefused() {
        let one = Int16(1 << KILN_RESAMPLE_WEIGHT_BITS)
        #expect(Self.run(weights: [one / 2, one / 2], srcWidth: Int32(KILN_RESAMPLE_MAX_SIDE) + 1).0 == -1)
        #expect(Self.run(weights: [one / 2, one / 2], srcWidth: Int32.max).0 == -1)
        #expect(Self.run(weights: [one / 2, one / 2]).0 >= 0)
    }
}
