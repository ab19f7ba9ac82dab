import CKilnResample

/// Which code runs `Resampler`'s two passes: the setting `debug.resampler`.
///
/// One fleet, one kernel: every host must write the same bytes for the same cache key, so the
/// CPU never chooses between kernels that differ. `.automatic` (the default) is the fixed-point
/// kernel of CKilnResample (weights quantised to 14 fractional bits, 16-bit intermediate rows,
/// 32-bit sums): its AVX2 path where the CPU has it, else its portable C path, which gives the
/// same bytes (about twice as slow: 1200×675 → 800×450 RGB, portable 9.1 ms, AVX2 2.1 ms).
/// `.float` is the Swift `HorizontalFilter`/`VerticalFilter` pair, the reference the kernel is
/// tested against: other bytes, so only an explicit debug setting selects it.
///
/// A worker applies `debug.resampler` at start (`processDefault`); `Resampler()` reads it.
public enum ResamplerKernel: String, Sendable, CaseIterable {
    /// The fixed-point kernel: AVX2 where the CPU has it, else portable (the same bytes).
    case automatic = "auto"
    /// The fixed-point kernel's plain C path.
    case portable
    /// The fixed-point kernel's AVX2 path (the portable one on a CPU without AVX2).
    case avx2
    /// The Swift float path: the reference, for measurements and tests only (other bytes).
    case float

    /// The kernel `Resampler()` runs in this process: `.automatic` until a worker applies
    /// `debug.resampler` (kept in CKilnResample, so every thread sees it).
    public static var processDefault: ResamplerKernel {
        get {
            switch kiln_resample_default_path() {
            case Int32(KILN_RESAMPLE_FLOAT): .float
            case Int32(KILN_RESAMPLE_PORTABLE): .portable
            case Int32(KILN_RESAMPLE_AVX2): .avx2
            default: .automatic
            }
        }
        set {
            let path: Int32 = switch newValue {
            case .automatic: Int32(KILN_RESAMPLE_AUTO)
            case .portable: Int32(KILN_RESAMPLE_PORTABLE)
            case .avx2: Int32(KILN_RESAMPLE_AVX2)
            case .float: Int32(KILN_RESAMPLE_FLOAT)
            }
            kiln_resample_set_default_path(path)
        }
    }

    /// True when this CPU runs the AVX2 path.
    public static var cpuHasAVX2: Bool { kiln_resample_has_avx2() != 0 }

    /// The fixed-point path that runs for this choice on this CPU (`nil`: the float path).
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
