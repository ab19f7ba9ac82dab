import KilnCodecs
import KilnModel

/// The structure walks that run before any decoder: `ImageCompleteness` (is a length-less origin
/// body a whole image?) and `CodedLayout` (do a HEIC's or AVIF's coded sizes match its `ispe`
/// boxes, and how many pixels do its tiles really hold?). Both read untrusted bytes and must
/// return or throw `DecodeError` for any input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    _ = ImageCompleteness.check(bytes)
    _ = try? CodedLayout.read(bytes, format: .heic)
    _ = try? CodedLayout.read(bytes, format: .avif)
    return 0
}
