import KilnCodecs
import KilnFuzzProbes

/// The JPEG marker scan (orientation, ICC chunks, EXIF, XMP, Adobe) and TurboJPEG's header read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? CodecProbe.jpegMarkers(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
