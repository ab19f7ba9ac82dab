import KilnModel

/// EXIF and XMP in PNG: the eXIf chunk (TIFF bytes, PNG 1.5 extensions) and an iTXt chunk with
/// the keyword "XML:com.adobe.xmp" (Adobe's XMP specification, part 3). Reading uses the chunk
/// ranges found by `PNGChunks`; writing goes through libpng in `kiln_png_encode`.
///
/// Compressed XMP (iTXt with the compression flag set) is not read: Adobe tools write it
/// uncompressed so that scanners can find the packet.
package enum PNGMetadata {
    static let xmpKeyword: [UInt8] = Array("XML:com.adobe.xmp".utf8)

    /// The metadata found in `bytes` at the ranges `chunks` recorded; EXIF orientation rewritten to 1.
    package static func read(_ bytes: UnsafeRawBufferPointer, chunks: PNGChunks) -> ImageMetadata? {
        var exif: [UInt8]?
        if let range = chunks.exif, !range.isEmpty, range.upperBound <= bytes.count {
            exif = ExifOrientation.resettingOrientation(Array(bytes[range]))
        }
        var xmp: [UInt8]?
        for range in chunks.textChunks where range.upperBound <= bytes.count {
            if let packet = xmpPacket(UnsafeRawBufferPointer(rebasing: bytes[range])) {
                xmp = packet
                break
            }
        }
        return ImageMetadata(exif: exif, xmp: xmp).nonEmpty
    }

    /// The text of an uncompressed iTXt chunk whose keyword is XMP's: keyword, NUL, compression
    /// flag, compression method, language tag, NUL, translated keyword, NUL, text.
    static func xmpPacket(_ data: UnsafeRawBufferPointer) -> [UInt8]? {
        let keyword = xmpKeyword
        guard data.count > keyword.count + 3 else { return nil }
        for index in 0..<keyword.count where data[index] != keyword[index] { return nil }
        var pos = keyword.count
        guard data[pos] == 0, data[pos + 1] == 0 else { return nil }   // NUL, not compressed
        pos += 3   // NUL, flag, method
        for _ in 0..<2 {   // language tag, translated keyword
            while pos < data.count && data[pos] != 0 { pos += 1 }
            pos += 1
        }
        guard pos < data.count else { return nil }
        return Array(data[pos...])
    }
}
