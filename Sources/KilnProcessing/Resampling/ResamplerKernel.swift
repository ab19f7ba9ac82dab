import CKilnResample

/// Which code runs `Resampler`'s two passes.
///
/// `.automatic` (the default) is the C kernel of CKilnResample on a CPU with AVX2 (weights
/// quantised to 14 fractional bits, 16-bit intermediate rows, 32-bit sums) and the Swift float
/// passes elsewhere: the kernel's portable C path gives the same bytes as its AVX2 path but takes
/// about twice the float path's time (1200×675 → 800×450 RGB: float 4.6 ms, portable 9.1 ms,
/// AVX2 2.1 ms), so it is kept for tests and measurements only. `.float` is the Swift
/// `HorizontalFilter`/`VerticalFilter` pair, the reference the kernel is tested against. The environment variable `KILN_RESAMPLER`
/// (`float`, `portable`, `avx2`, `auto`) overrides the default, for measurements only.
public enum ResamplerKernel: String, Sendable, CaseIterable {
    /// The Swift float path (the reference).
    case float
    /// The fixed-point kernel's plain C path.
    case portable
    /// The fixed-point kernel's AVX2 path (the portable one on a CPU without AVX2).
    case avx2
    /// The AVX2 path where the CPU has it, else the float path.
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

    /// The fixed-point path that runs for this choice on this CPU (`nil`: the float path).
    public var resolved: ResamplerKernel? {
        switch self {
        case .float: nil
        case .portable: .portable
        case .avx2: Self.cpuHasAVX2 ? .avx2 : .portable
        case .automatic: Self.cpuHasAVX2 ? .avx2 : nil
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
