import CKilnResample

/// Which code runs `Resampler`'s two passes.
///
/// `.fixedPoint` (the default) is the C kernel of CKilnResample: weights quantised to 14
/// fractional bits, 16-bit intermediate rows, 32-bit sums, on AVX2 where the CPU has it and in
/// portable C otherwise. `.float` is the Swift `HorizontalFilter`/`VerticalFilter` pair, the
/// reference the kernel is tested against. The environment variable `KILN_RESAMPLER`
/// (`float`, `portable`, `avx2`, `auto`) overrides the default, for measurements only.
public enum ResamplerKernel: String, Sendable, CaseIterable {
    /// The Swift float path (the reference).
    case float
    /// The fixed-point kernel's plain C path.
    case portable
    /// The fixed-point kernel's AVX2 path (the portable one on a CPU without AVX2).
    case avx2
    /// AVX2 where the CPU has it, else portable.
    case automatic

    /// `KILN_RESAMPLER`'s choice, `.automatic` when unset (read once per process).
    public static var environmentDefault: ResamplerKernel {
        switch kiln_resample_environment_path() {
        case Int32(KILN_RESAMPLE_FLOAT): .float
        case Int32(KILN_RESAMPLE_PORTABLE): .portable
        case Int32(KILN_RESAMPLE_AVX2): .avx2
        default: .automatic
        }
    }

    /// True when this CPU runs the AVX2 path.
    public static var cpuHasAVX2: Bool { kiln_resample_has_avx2() != 0 }

    /// The fixed-point path that runs for this choice on this CPU (`nil` for `.float`).
    public var resolved: ResamplerKernel? {
        switch self {
        case .float: nil
        case .portable: .portable
        case .avx2, .automatic: Self.cpuHasAVX2 ? .avx2 : .portable
        }
    }

    var cPath: Int32 {
        switch self {
        case .float, .automatic: Int32(KILN_RESAMPLE_AUTO)
        case .portable: Int32(KILN_RESAMPLE_PORTABLE)
        case .avx2: Int32(KILN_RESAMPLE_AVX2)
        }
    }
}
