import KilnModel

/// EXIF and XMP in JPEG: APP1 segments identified by "Exif\0\0" (then TIFF bytes) and by
/// "http://ns.adobe.com/xap/1.0/\0" (then the XMP packet), as written by cameras and Adobe tools.
///
/// A segment holds at most 65 533 bytes: a larger EXIF block cannot be written in JPEG and is left
/// out, and XMP that needs Adobe's "extended XMP" split is left out too (neither is ever fatal).
enum JPEGMetadata {
    static let exifSignature: [UInt8] = Array("Exif".utf8) + [0, 0]
    static let xmpSignature: [UInt8] = Array("http://ns.adobe.com/xap/1.0/".utf8) + [0]
    /// Largest segment body after the two length bytes.
    static let segmentCapacity = 65_533

    /// The APP1 segments (marker and length included) for `metadata`: EXIF first, then XMP.
    static func segments(_ metadata: ImageMetadata) -> [UInt8] {
        var bytes: [UInt8] = []
        if let exif = metadata.exif, !exif.isEmpty { bytes += app1(exifSignature, exif) ?? [] }
        if let xmp = metadata.xmp, !xmp.isEmpty { bytes += app1(xmpSignature, xmp) ?? [] }
        return bytes
    }

    private static func app1(_ signature: [UInt8], _ payload: [UInt8]) -> [UInt8]? {
        let length = 2 + signature.count + payload.count
        guard length <= segmentCapacity + 2 else { return nil }
        return [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + signature + payload
    }

    /// Inserts `segments` after SOI and a leading JFIF APP0 (where libjpeg's
    /// `jpeg_write_marker` would put them); `jpeg` unchanged when it does not start with SOI.
    static func inserting(_ segments: [UInt8], into jpeg: [UInt8]) -> [UInt8] {
        guard !segments.isEmpty, jpeg.count >= 4, jpeg[0] == 0xFF, jpeg[1] == 0xD8 else { return jpeg }
        var insertAt = 2
        if jpeg.count >= 6 && jpeg[2] == 0xFF && jpeg[3] == 0xE0 {
            let length = Int(jpeg[4]) << 8 | Int(jpeg[5])
            if 4 + length <= jpeg.count { insertAt = 4 + length }
        }
        var result: [UInt8] = []
        result.reserveCapacity(jpeg.count + segments.count)
        result += jpeg[0..<insertAt]
        result += segments
        result += jpeg[insertAt...]
        return result
    }
}
