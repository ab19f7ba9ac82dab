import KilnCodecs
import KilnFuzzProbes

/// The PNG chunk walk, eXIf / iTXt metadata, the iCCP read, libpng's header read, and the fast
/// decode path against libpng's.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? CodecProbe.pngChunks(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
