import KilnFuzzProbes
import KilnModel

/// The raster inputs of issue 38 on bytes (`CodecProbe.rasterInput`): `TIFFDecoder` (libtiff and
/// `TIFFDirectoryChain`), `BMPDecoder` and `ICODecoder` (`DIBImage`, ICO directories, PNG
/// entries), `JXLDecoder` (libjxl). The first byte picks the decoder and the page; readHeader,
/// then decode under small limits: a result or a DecodeError, never a trap.
private let limits = DecodeLimits(maxPixels: 1 << 20, maxAnimationPixels: 4 << 20)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? CodecProbe.rasterInput(Array(UnsafeBufferPointer(start: data, count: size)), limits: limits)
    return 0
}
