import KilnCodecs

/// The PNG chunk walk, eXIf / iTXt metadata, the iCCP read and libpng's header read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    _ = try? CodecProbe.pngChunks(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}
