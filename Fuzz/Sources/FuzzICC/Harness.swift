import KilnCodecs
import KilnFuzzProbes

/// ICC profile bytes through lcms2: open, classify, sRGB check, transform creation and use.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = CodecProbe.iccProfile(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
