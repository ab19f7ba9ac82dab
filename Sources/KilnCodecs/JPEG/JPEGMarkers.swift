import KilnModel

/// What the JPEG decoder reads from the marker segments itself (TurboJPEG 2.1 exposes neither):
/// the EXIF orientation, the ICC profile, EXIF and XMP payloads and whether an Adobe APP14 marker
/// is present.
///
/// The scan walks the segments from SOI to the first SOS and never touches entropy-coded data.
/// Every read is bounds-checked by hand (a malformed segment is refused, not trapped on).
package struct JPEGMarkers {
    /// EXIF orientation 1...8 from the first APP1 "Exif\0\0" segment; 1 when absent.
    package var orientation = 1
    /// True when an APP14 "Adobe" segment was seen (its CMYK data are stored inverted).
    var hasAdobeMarker = false
    /// The ICC profile assembled from APP2 "ICC_PROFILE\0" segments in sequence order, nil when
    /// absent, not asked for, or inconsistent (missing or duplicate sequence numbers).
    package var iccProfile: [UInt8]?
    /// True when an APP2 "ICC_PROFILE\0" segment was seen (whether or not payloads were collected).
    var hasICCSegment = false
    /// The first APP1 EXIF (TIFF bytes, orientation rewritten to 1) and APP1 XMP packet, when asked for.
    package var metadata: ImageMetadata?
    /// True when more than `maxSegments` segments come before the first scan; the scan stopped
    /// there and the decoder refuses the file (1000 APPn segments are no photo; libjpeg would
    /// skip through each, and so would every later scan of the markers).
    var hasTooManySegments = false

    /// Most marker segments before the first SOS. A camera JPEG has about ten; a 16 MB ICC
    /// profile needs 255 APP2 segments, and extended XMP a few dozen APP1.
    static let maxSegments = 500

    private static let adobeSignature: [UInt8] = Array("Adobe".utf8)

    /// Scans `data`. Malformed segment structure ends the scan quietly: libjpeg reports it when
    /// decoding. `collectPayloads` copies the ICC profile, EXIF and XMP out (decoding, not headers).
    package static func scan(_ data: UnsafeRawBufferPointer, collectPayloads: Bool) -> JPEGMarkers {
        var result = JPEGMarkers()
        guard data.count >= 4, data[0] == 0xFF, data[1] == 0xD8 else { return result }
        var exifSeen = false
        var exif: [UInt8]?, xmp: [UInt8]?
        var iccChunks: [ICCProfile.JPEGChunk] = []
        var pos = 2
        var segments = 0
        while pos < data.count {
            guard data[pos] == 0xFF else { break }
            while pos < data.count && data[pos] == 0xFF { pos += 1 }   // fill bytes
            guard pos < data.count else { break }
            let marker = data[pos]
            pos += 1
            // Stand-alone markers carry no length.
            if marker == 0xD8 || marker == 0x01 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xDA || marker == 0xD9 { break }   // SOS: entropy-coded data follow; EOI
            guard pos + 2 <= data.count else { break }
            let length = Int(data[pos]) << 8 | Int(data[pos + 1])
            guard length >= 2, pos + length <= data.count else { break }
            let body = pos + 2 ..< pos + length
            pos += length
            segments += 1
            if segments > maxSegments {
                result.hasTooManySegments = true
                break
            }
            switch marker {
            case 0xE1:
                let segment = UnsafeRawBufferPointer(rebasing: data[body])
                if ExifOrientation.hasExifIdentifier(segment) {
                    guard !exifSeen else { break }
                    exifSeen = true
                    result.orientation = ExifOrientation.read(segment)
                    if collectPayloads && segment.count > 6 {
                        exif = ExifOrientation.resettingOrientation(Array(segment[6...]))
                    }
                } else if collectPayloads && xmp == nil && starts(segment, at: 0, with: JPEGMetadata.xmpSignature) {
                    let packet = segment[JPEGMetadata.xmpSignature.count...]
                    if !packet.isEmpty { xmp = Array(packet) }
                }
            case 0xE2:
                if body.count >= 14 && starts(data, at: body.lowerBound, with: ICCProfile.jpegSignature) {
                    result.hasICCSegment = true
                    guard collectPayloads else { break }
                    iccChunks.append(ICCProfile.JPEGChunk(sequence: Int(data[body.lowerBound + 12]),
                                                          total: Int(data[body.lowerBound + 13]),
                                                          range: body.lowerBound + 14 ..< body.upperBound))
                }
            case 0xEE:
                if starts(data, at: body.lowerBound, with: adobeSignature) && body.count >= 12 {
                    result.hasAdobeMarker = true
                }
            default:
                break
            }
        }
        if collectPayloads {
            result.iccProfile = ICCProfile.assemble(iccChunks, in: data)
            result.metadata = ImageMetadata(exif: exif, xmp: xmp).nonEmpty
        }
        return result
    }

    private static func starts(_ data: UnsafeRawBufferPointer, at offset: Int, with signature: [UInt8]) -> Bool {
        guard offset >= 0, offset + signature.count <= data.count else { return false }
        for (index, byte) in signature.enumerated() where data[offset + index] != byte { return false }
        return true
    }
}
