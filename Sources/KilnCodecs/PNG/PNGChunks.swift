import KilnModel

/// A walk over PNG chunk headers (no CRC checks, no decompression) before libpng sees the file.
///
/// It refuses chunks that claim more bytes than the file has. libpng 1.6.39 allocates and zeroes
/// the declared length of an oversized ancillary chunk before it notices the data is missing:
/// the 57-byte `libpng_huge_tEXt_chunk.png` (a tEXt chunk claiming 1 GiB) cost 2-3 s of CPU and
/// 1 GiB of memory inside `png_image_begin_read_from_memory`. It also learns whether an iCCP
/// chunk comes before the image data, and where the eXIf chunk and the XMP iTXt chunk are
/// (`PNGMetadata`). Bounds are checked by hand (a malformed chunk is refused, not trapped on).
///
/// Two more refusals bound what libpng spends on chunks Kiln never uses (issue 9): more than
/// `maxChunks` chunks besides the image data (IDAT, and APNG's fcTL / fdAT) make the file
/// `corrupt` (50 000 tEXt chunks cost libpng 12 ms; real files carry a few dozen), and the text
/// chunks (tEXt, zTXt, iTXt) are cut out of the bytes libpng sees (`withLibpngBytes`): libpng
/// inflates every zTXt up to 8 MB before it decides to drop it, so 900 small zTXt bombs cost a
/// minute of CPU. Kiln reads XMP from its own iTXt ranges, so nothing is lost.
package struct PNGChunks {
    /// True when an iCCP chunk comes before the first IDAT.
    package var hasICCProfile = false
    /// Data of the first eXIf chunk.
    var exif: Range<Int>?
    /// Data of the iTXt chunks (XMP is one of them, keyword "XML:com.adobe.xmp").
    var textChunks: [Range<Int>] = []
    /// Whole tEXt, zTXt and iTXt chunks (length to CRC), which libpng is not shown.
    var hiddenFromLibpng: [Range<Int>] = []

    /// The IHDR fields the row reader cares about (nil when the first chunk is not a whole IHDR).
    package var ihdr: (width: Int, height: Int, bitDepth: Int, hasAlpha: Bool, interlaced: Bool, colorType: Int)?
    /// True when a tRNS chunk comes before the first IDAT (the decode then has alpha).
    var hasTransparency = false
    /// The gAMA value (× 100000) before the first IDAT, and whether an sRGB chunk is there.
    var gamma: Int?
    var hasSRGB = false
    /// The IDAT chunks, whole (length field to CRC), in file order, when they run back to back
    /// and none is truncated; nil otherwise (`PNGFastDecode` then leaves the file to libpng).
    var idatChunks: [Range<Int>]? = []

    /// True when `PNGShrinkOnLoad` may read the rows one by one: non-interlaced, at most 8 bits
    /// per sample and sRGB-encoded, so libpng's rows equal what the simplified API returns.
    var rowReadable: Bool {
        guard let ihdr, !ihdr.interlaced, ihdr.bitDepth <= 8 else { return false }
        return gamma == nil || hasSRGB || gamma == 45455
    }

    /// Most chunks besides IDAT, fcTL and fdAT (libpng's own cache keeps 1000 text chunks).
    static let maxChunks = 1000

    private static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Walks the chunks up to IEND. A truncated IDAT is left to libpng, which reports it with its
    /// own message when decoding; any other chunk that runs past the end is `corrupt` here.
    package static func scan(_ bytes: UnsafeRawBufferPointer) throws(DecodeError) -> PNGChunks {
        var result = PNGChunks()
        guard bytes.count >= 8 else { throw .corrupt("not a PNG file (too short)") }
        for index in 0..<8 where bytes[index] != signature[index] { throw .corrupt("not a PNG file (bad signature)") }
        var pos = 8
        var seenIDAT = false
        var otherChunks = 0
        while pos + 8 <= bytes.count {
            let length = Int(bytes[pos]) << 24 | Int(bytes[pos + 1]) << 16 | Int(bytes[pos + 2]) << 8 | Int(bytes[pos + 3])
            let type = (bytes[pos + 4], bytes[pos + 5], bytes[pos + 6], bytes[pos + 7])
            let isIDAT = type == (0x49, 0x44, 0x41, 0x54)
            if type == (0x69, 0x43, 0x43, 0x50) && !seenIDAT { result.hasICCProfile = true }   // "iCCP"
            if pos == 8 && type == (0x49, 0x48, 0x44, 0x52) && length == 13 && pos + 21 <= bytes.count {   // "IHDR"
                func be32(_ at: Int) -> Int { Int(bytes[at]) << 24 | Int(bytes[at + 1]) << 16 | Int(bytes[at + 2]) << 8 | Int(bytes[at + 3]) }
                result.ihdr = (be32(pos + 8), be32(pos + 12), Int(bytes[pos + 16]), bytes[pos + 17] & 4 != 0, bytes[pos + 20] != 0,
                               Int(bytes[pos + 17]))
            }
            if !seenIDAT && type == (0x74, 0x52, 0x4E, 0x53) { result.hasTransparency = true }   // "tRNS"
            if !seenIDAT && type == (0x73, 0x52, 0x47, 0x42) { result.hasSRGB = true }           // "sRGB"
            if !seenIDAT && type == (0x67, 0x41, 0x4D, 0x41) && length == 4 && pos + 12 <= bytes.count {   // "gAMA"
                result.gamma = Int(bytes[pos + 8]) << 24 | Int(bytes[pos + 9]) << 16 | Int(bytes[pos + 10]) << 8 | Int(bytes[pos + 11])
            }
            if type == (0x49, 0x45, 0x4E, 0x44) { break }                                      // "IEND"
            let end = pos + 12 + length
            if end > bytes.count {
                if isIDAT { result.idatChunks = nil; break }
                throw .corrupt("\(name(type)): chunk length \(length) runs past the end of the data (truncated)")
            }
            if isIDAT {
                if seenIDAT, let last = result.idatChunks?.last, last.upperBound != pos { result.idatChunks = nil }
                result.idatChunks?.append(pos ..< end)
            }
            seenIDAT = seenIDAT || isIDAT
            let isFrame = type == (0x66, 0x63, 0x54, 0x4C) || type == (0x66, 0x64, 0x41, 0x54)   // "fcTL", "fdAT"
            if !isIDAT && !isFrame {
                otherChunks += 1
                guard otherChunks <= maxChunks else {
                    throw .corrupt("more than \(maxChunks) chunks besides the image data")
                }
            }
            let isText = type == (0x74, 0x45, 0x58, 0x74) || type == (0x7A, 0x54, 0x58, 0x74)   // "tEXt", "zTXt"
                || type == (0x69, 0x54, 0x58, 0x74)                                              // "iTXt"
            if isText { result.hiddenFromLibpng.append(pos ..< end) }
            if type == (0x65, 0x58, 0x49, 0x66) && result.exif == nil { result.exif = pos + 8 ..< pos + 8 + length }   // "eXIf"
            if type == (0x69, 0x54, 0x58, 0x74) { result.textChunks.append(pos + 8 ..< pos + 8 + length) }             // "iTXt"
            pos = end
        }
        return result
    }

    /// `body` over the bytes libpng should read: `bytes` itself, or a copy without the text chunks
    /// when there are any.
    package func withLibpngBytes<T>(_ bytes: UnsafeRawBufferPointer,
                            _ body: (UnsafeRawBufferPointer) throws(DecodeError) -> T) throws(DecodeError) -> T {
        guard !hiddenFromLibpng.isEmpty else { return try body(bytes) }
        var copy: [UInt8] = []
        copy.reserveCapacity(bytes.count - hiddenFromLibpng.reduce(0) { $0 + $1.count })
        var start = 0
        for range in hiddenFromLibpng where range.lowerBound >= start && range.upperBound <= bytes.count {
            copy.append(contentsOf: bytes[start ..< range.lowerBound])
            start = range.upperBound
        }
        copy.append(contentsOf: bytes[start...])
        return try copy.withUnsafeBytes { copied in Result { () throws(DecodeError) -> T in try body(copied) } }.get()
    }

    /// EXIF orientation 1...8 from the eXIf chunk found by the scan of `bytes`; 1 when absent.
    package func orientation(in bytes: UnsafeRawBufferPointer) -> Int {
        guard let exif, exif.upperBound <= bytes.count else { return 1 }
        return ExifOrientation.read(UnsafeRawBufferPointer(rebasing: bytes[exif]))
    }

    private static func name(_ type: (UInt8, UInt8, UInt8, UInt8)) -> String {
        let bytes = [type.0, type.1, type.2, type.3]
        guard bytes.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return "chunk" }
        return String(decoding: bytes, as: UTF8.self)
    }
}
