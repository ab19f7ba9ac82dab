import CHeif

/// libheif's functions, loaded on first use (`kiln_heif_library`, a dlopen of libheif.so.1, which
/// pulls in libde265, x265 and aom). nil when the library is missing.
enum HEIFLibrary {
    static var functions: kiln_heif_api? { kiln_heif_library()?.pointee }
    static let missing = "libheif (libheif.so.1) is not installed"
}
