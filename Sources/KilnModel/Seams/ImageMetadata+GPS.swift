/// The GPS position out of kept metadata (`strip:0`; issue 36): a photo's EXIF and XMP may say
/// where it was taken, and any client may ask for `strip:0`. Unless `output.info_gps` allows it,
/// the encoder gets the metadata without it; copyright, artist, camera and the (reset)
/// orientation stay.
extension ImageMetadata {
    /// EXIF with its GPS IFD emptied and unlinked (`ExifGPS`; EXIF that cannot be walked is
    /// dropped whole), and no XMP packet that names a GPS property (XMP's `exif:GPS…`; the
    /// copyright is also in EXIF's Copyright tag, which stays).
    public var withoutGPS: ImageMetadata {
        var out = self
        if let exif { out.exif = ExifGPS.removing(from: exif) }
        if let xmp, xmp.firstRange(of: Array("GPS".utf8)) != nil { out.xmp = nil }
        return out
    }
}

/// Removes the GPS IFD from EXIF TIFF bytes, in place and bounds-checked: the IFD's entries and
/// their out-of-line values are zeroed, and IFD0's GPSInfo entry (tag 0x8825) is taken out (the
/// entries after it move up, the count drops by one). Offsets elsewhere stay valid, since no byte
/// moves outside IFD0's entry table.
enum ExifGPS {
    static let gpsInfoTag: UInt16 = 0x8825

    /// The bytes without GPS; unchanged when there is none; nil when the TIFF cannot be walked
    /// (the caller then keeps no EXIF rather than risk keeping a position).
    static func removing(from tiff: [UInt8]) -> [UInt8]? {
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: return nil
        }
        var out = tiff
        let io = TIFFWords(bigEndian: bigEndian)
        guard io.u16(out, 2) == 42, let ifd0 = io.u32(out, 4).map(Int.init), let n = io.u16(out, ifd0).map(Int.init),
              ifd0 + 2 + n * 12 + 4 <= out.count else { return nil }
        guard let index = (0..<n).first(where: { io.u16(out, ifd0 + 2 + $0 * 12) == gpsInfoTag }) else { return tiff }
        let entry = ifd0 + 2 + index * 12
        guard let gps = io.u32(out, entry + 8).map(Int.init), let m = io.u16(out, gps).map(Int.init),
              gps + 2 + m * 12 + 4 <= out.count else { return nil }
        // Empty the GPS IFD: each value stored elsewhere, then the table itself. Values of a real
        // GPS IFD never add up to more than the EXIF itself; hostile ones that overlap to do so
        // (65535 entries each naming the whole file) drop the EXIF instead of costing their product.
        var zeroed = 0
        for j in 0..<m {
            let e = gps + 2 + j * 12
            guard let type = io.u16(out, e + 2), let size = typeSize(type), let count = io.u32(out, e + 4).map(Int.init),
                  count <= out.count else { return nil }
            let bytes = size * count
            if bytes > 4 {
                zeroed += bytes
                guard zeroed <= out.count, let at = io.u32(out, e + 8).map(Int.init), at + bytes <= out.count else { return nil }
                for k in at..<(at + bytes) { out[k] = 0 }
            }
        }
        for k in gps..<(gps + 2 + m * 12 + 4) { out[k] = 0 }
        // Unlink: the entries after it and the next-IFD offset move up by one entry.
        let end = ifd0 + 2 + n * 12 + 4
        for k in (entry + 12)..<end { out[k - 12] = out[k] }
        for k in (end - 12)..<end { out[k] = 0 }
        io.put16(&out, ifd0, UInt16(n - 1))
        return out
    }

    /// Bytes per value of a TIFF field type; nil for types TIFF does not define.
    static func typeSize(_ type: UInt16) -> Int? {
        switch type {
        case 1, 2, 6, 7: 1
        case 3, 8: 2
        case 4, 9, 11: 4
        case 5, 10, 12: 8
        default: nil
        }
    }
}

/// Bounds-checked 16- and 32-bit words of a TIFF in its byte order.
struct TIFFWords {
    let bigEndian: Bool

    func u16(_ b: [UInt8], _ at: Int) -> UInt16? {
        guard at >= 0, at + 2 <= b.count else { return nil }
        let x = UInt16(b[at]), y = UInt16(b[at + 1])
        return bigEndian ? x << 8 | y : y << 8 | x
    }

    func u32(_ b: [UInt8], _ at: Int) -> UInt32? {
        guard let first = u16(b, at), let second = u16(b, at + 2) else { return nil }
        return bigEndian ? UInt32(first) << 16 | UInt32(second) : UInt32(second) << 16 | UInt32(first)
    }

    func put16(_ b: inout [UInt8], _ at: Int, _ v: UInt16) {
        b[at] = UInt8(bigEndian ? v >> 8 : v & 0xFF)
        b[at + 1] = UInt8(bigEndian ? v & 0xFF : v >> 8)
    }
}
