import CTiff
import KilnModel

/// A libtiff handle over bytes in memory (`kiln_tiff_open` of CTiff: libtiff 4.5's
/// `TIFFClientOpenExt` with read, seek and size callbacks over the bytes, writing refused, no
/// mapping), valid for the length of one call. libtiff's single allocations are bounded
/// (`TIFFOpenOptionsSetMaxSingleMemAlloc`) and its messages are kept per handle, never printed:
/// the first error becomes the `DecodeError`'s reason.
struct TIFFHandle {
    let file: OpaquePointer

    static let missing = "TIFF needs libtiff (libtiff6), which is not installed"

    /// Opens `data` and calls `body` with the handle.
    static func with<T>(_ data: [UInt8], maxAllocation: Int, _ body: (TIFFHandle) throws(DecodeError) -> T) throws(DecodeError) -> T {
        guard kiln_tiff_available() != 0 else { throw .unsupported(missing) }
        return try data.withUnsafeBufferPointer { bytes in
            Result { () throws(DecodeError) -> T in
                var message = [CChar](repeating: 0, count: 256)
                guard let base = bytes.baseAddress else { throw .corrupt("TIFF is truncated") }
                let opened = message.withUnsafeMutableBufferPointer { text in
                    kiln_tiff_open(base, bytes.count, Int64(maxAllocation), text.baseAddress!, text.count)
                }
                guard let file = opened else { throw error(text(message)) }
                defer { kiln_tiff_close(file) }
                return try body(TIFFHandle(file: file))
            }
        }.get()
    }

    /// Directory `page`'s fields.
    func info(page: Int) throws(DecodeError) -> kiln_tiff_info {
        var info = kiln_tiff_info()
        guard kiln_tiff_read_info(file, UInt32(page), &info) != 0 else { throw lastError(or: "TIFF page \(page) cannot be read") }
        return info
    }

    /// The current directory's ICC profile, nil when it has none.
    func iccProfile(size: Int) -> [UInt8]? {
        guard size > 0 else { return nil }
        var profile = [UInt8](repeating: 0, count: size)
        let copied = profile.withUnsafeMutableBufferPointer { kiln_tiff_icc(file, $0.baseAddress, $0.count) }
        return copied == size ? profile : nil
    }

    /// The current directory through libtiff's RGBA reader: packed ABGR words, stored orientation,
    /// and whether they came out premultiplied (any alpha does).
    func readRGBA(width: Int, height: Int) throws(DecodeError) -> (raster: [UInt32], premultiplied: Bool) {
        var raster = [UInt32](repeating: 0, count: width * height)
        var alpha: Int32 = 0
        let ok = raster.withUnsafeMutableBufferPointer { words in
            kiln_tiff_read_rgba(file, words.baseAddress!, UInt32(width), UInt32(height), &alpha)
        }
        guard ok != 0 else { throw lastError(or: "TIFF image data cannot be read") }
        return (raster, alpha != 0)
    }

    func lastError(or fallback: String) -> DecodeError {
        let message = String(cString: kiln_tiff_error(file))
        return message.isEmpty ? .corrupt(fallback) : Self.error(message)
    }

    /// libtiff's message as a one-line `DecodeError`: over the allocation bound is `.overLimit`,
    /// libtiff's "Sorry, can not handle ..." `.unsupported`, anything else `.corrupt`.
    static func error(_ message: String) -> DecodeError {
        let line = message.split(whereSeparator: \.isNewline).joined(separator: " ")
        if line.contains("byte limit") { return .overLimit("TIFF: \(line)") }
        if line.hasPrefix("Sorry") { return .unsupported("TIFF: \(line)") }
        return .corrupt("TIFF: \(line)")
    }

    static func text(_ characters: [CChar]) -> String {
        String(decoding: characters.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
