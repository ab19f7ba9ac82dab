import KilnFuzzProbes
import KilnProcessing

/// The resampler's fixed-point kernel (CKilnResample) on random small images, sizes, crops and
/// layouts (grey as RGB, RGB, straight and premultiplied RGBA): the portable and AVX2 paths must agree
/// bit for bit and stay within `ResamplerProbe.tolerance` of the float reference.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    ResamplerProbe.check(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
