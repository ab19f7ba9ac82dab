import KilnCodecs
import KilnFuzzProbes

/// libwebp's demuxer over the RIFF container (EXIF, ICCP, XMP chunks) and the WebP header read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? CodecProbe.webpContainer(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
