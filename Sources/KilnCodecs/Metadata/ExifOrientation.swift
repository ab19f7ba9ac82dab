/// Reads the EXIF orientation (TIFF tag 0x0112 in IFD0) from an EXIF payload.
///
/// Shared by the JPEG decoder (APP1 "Exif\0\0" segment) and the WebP decoder ("EXIF" chunk).
/// Every read is bounds-checked by hand: the bytes come from untrusted files, and a malformed
/// payload must be refused, not trapped on by the standard library's own checks.
package enum ExifOrientation {
    /// Orientation 1...8 read from `payload`: TIFF bytes ("II*\0" or "MM\0*"), optionally preceded
    /// by the "Exif\0\0" identifier. Returns 1 when the tag is absent, malformed or out of range.
    static func read(_ payload: UnsafeRawBufferPointer) -> Int {
        var tiff = payload
        if hasExifIdentifier(tiff) {
            tiff = UnsafeRawBufferPointer(rebasing: tiff[6...])
        }
        return readTIFF(tiff) ?? 1
    }

    /// Convenience for byte arrays (tests, chunks copied out of a container).
    package static func read(_ payload: [UInt8]) -> Int {
        payload.withUnsafeBytes { read($0) }
    }

    /// True when the bytes start with "Exif\0\0".
    package static func hasExifIdentifier(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 6 && bytes[0] == 0x45 && bytes[1] == 0x78 && bytes[2] == 0x69
            && bytes[3] == 0x66 && bytes[4] == 0 && bytes[5] == 0
    }

    /// A copy of EXIF TIFF bytes with the orientation tag's value set to 1 (the pipeline applies
    /// the rotation, so a copy of the tag would make viewers rotate again). Bytes without the tag,
    /// or malformed ones, come back unchanged.
    package static func resettingOrientation(_ tiff: [UInt8]) -> [UInt8] {
        var copy = tiff
        let entry = tiff.withUnsafeBytes { orientationEntry($0) }
        if let entry {
            let valueOffset = entry.offset + 8
            copy[valueOffset] = entry.bigEndian ? 0 : 1
            copy[valueOffset + 1] = entry.bigEndian ? 1 : 0
        }
        return copy
    }

    private static func readTIFF(_ tiff: UnsafeRawBufferPointer) -> Int? {
        guard let entry = orientationEntry(tiff) else { return nil }
        let reader = Reader(bytes: tiff, bigEndian: entry.bigEndian)
        guard let value = reader.u16(at: entry.offset + 8) else { return nil }
        return (1...8).contains(Int(value)) ? Int(value) : nil
    }

    /// Where IFD0's orientation entry (type SHORT, count ≥ 1) starts in `tiff`, and the byte order;
    /// nil when absent or malformed. The value sits in the first two bytes of the value field (+8).
    private static func orientationEntry(_ tiff: UnsafeRawBufferPointer) -> (offset: Int, bigEndian: Bool)? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false   // "II", Intel
        case (0x4D, 0x4D): bigEndian = true    // "MM", Motorola
        default: return nil
        }
        let reader = Reader(bytes: tiff, bigEndian: bigEndian)
        guard reader.u16(at: 2) == 42, let ifd0 = reader.u32(at: 4) else { return nil }
        let ifdOffset = Int(ifd0)
        guard let entryCount = reader.u16(at: ifdOffset) else { return nil }
        for index in 0..<Int(entryCount) {
            let entry = ifdOffset + 2 + index * 12
            guard let tag = reader.u16(at: entry) else { return nil }
            guard tag == 0x0112 else { continue }
            // Type SHORT (3), count 1; the value sits in the first two bytes of the value field.
            guard reader.u16(at: entry + 2) == 3, let count = reader.u32(at: entry + 4), count >= 1,
                  reader.u16(at: entry + 8) != nil else { return nil }
            return (entry, bigEndian)
        }
        return nil
    }

    /// Bounds-checked integer reads in the TIFF's byte order.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        let bigEndian: Bool

        func u16(at offset: Int) -> UInt16? {
            guard offset >= 0, offset <= bytes.count - 2 else { return nil }
            let a = UInt16(bytes[offset]), b = UInt16(bytes[offset + 1])
            return bigEndian ? (a << 8 | b) : (b << 8 | a)
        }

        func u32(at offset: Int) -> UInt32? {
            guard let first = u16(at: offset), let second = u16(at: offset + 2) else { return nil }
            return bigEndian ? (UInt32(first) << 16 | UInt32(second)) : (UInt32(second) << 16 | UInt32(first))
        }
    }
}
