import KilnCodecs
import KilnFuzzProbes
import KilnModel

/// The whole decode path on bytes (`CodecProbe.decodePath`): sniff (libmagic), header, limits,
/// decode, conversion to sRGB. Max pixels is small to keep the runs fast; shrink-on-load is
/// chosen from the input's length so both paths run.
// libFuzzer calls the harness from one thread: one libmagic cookie for the process.
nonisolated(unsafe) private let sniffer = MagicSniffer()
private let limits = DecodeLimits(maxPixels: 1 << 20, maxAnimationPixels: 4 << 20)
private let converter = SRGBConverter(cacheCapacity: 2)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let minimum: PixelSize? = size % 3 == 0 ? nil : PixelSize(width: 16, height: 16)
    _ = try? CodecProbe.decodePath(bytes, sniffer: sniffer, limits: limits, minimumSize: minimum, converter: converter)
    return 0
}
