import KilnCodecs
import KilnFuzzProbes

/// The EXIF reader: orientation and the orientation reset on TIFF bytes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = CodecProbe.exif(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
