import CAvif

/// libavif's functions, loaded on first use (`kiln_avif_library`, a dlopen of libavif.so.15): a
/// process maps libavif and the AV1 codecs it pulls in (aom, dav1d, rav1e, SVT-AV1, gav1, libyuv)
/// only when a request reads or writes AVIF. nil when the library is missing.
enum AVIFLibrary {
    static var functions: kiln_avif_api? { kiln_avif_library()?.pointee }
    static let missing = "libavif (libavif.so.15) is not installed"
}
