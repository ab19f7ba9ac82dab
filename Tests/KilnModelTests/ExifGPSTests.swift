import Testing
@testable import KilnModel

/// `ImageMetadata.withoutGPS` (`ExifGPS`): the GPS position leaves kept metadata, the rest stays.
@Suite struct ExifGPSTests {
    /// A TIFF with IFD0 = Orientation, Copyright ("Kiln Ltd"), GPSInfo; GPS IFD = LatitudeRef "N",
    /// Latitude 52/1 31/1 7/1.
    static func tiff(bigEndian: Bool, gps: Bool = true) -> [UInt8] {
        var b: [UInt8] = []
        func u16(_ v: Int) { b += bigEndian ? [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func u32(_ v: Int) { if bigEndian { u16(v >> 16); u16(v & 0xFFFF) } else { u16(v & 0xFFFF); u16(v >> 16) } }
        b += bigEndian ? Array("MM".utf8) : Array("II".utf8)
        u16(42); u32(8)
        let entries = gps ? 3 : 2
        let ifd0End = 8 + 2 + entries * 12 + 4
        let copyright = ifd0End, gpsIFD = copyright + 10, latitude = gpsIFD + 2 + 2 * 12 + 4
        u16(entries)
        u16(0x0112); u16(3); u32(1); u16(1); u16(0)
        u16(0x8298); u16(2); u32(10); u32(copyright)
        if gps { u16(0x8825); u16(4); u32(1); u32(gpsIFD) }
        u32(0)
        b += Array("Kiln Ltd".utf8) + [0, 0]
        if gps {
            u16(2)
            u16(1); u16(2); u32(2); b += [UInt8(ascii: "N"), 0, 0, 0]
            u16(2); u16(5); u32(3); u32(latitude)
            u32(0)
            for v in [52, 31, 7] { u32(v); u32(1) }
        }
        return b
    }

    static func tags(_ t: [UInt8], bigEndian: Bool) -> [UInt16] {
        let io = TIFFWords(bigEndian: bigEndian)
        let n = Int(io.u16(t, 8)!)
        return (0..<n).map { io.u16(t, 10 + $0 * 12)! }
    }

    @Test(arguments: [false, true])
    func theGPSIFDIsEmptiedAndUnlinked(bigEndian: Bool) throws {
        let source = Self.tiff(bigEndian: bigEndian)
        #expect(Self.tags(source, bigEndian: bigEndian) == [0x0112, 0x8298, 0x8825])
        let out = try #require(ExifGPS.removing(from: source))
        #expect(out.count == source.count)
        #expect(Self.tags(out, bigEndian: bigEndian) == [0x0112, 0x8298])
        #expect(out.firstRange(of: Array("Kiln Ltd".utf8)) != nil, "the copyright stays")
        // The GPS IFD and the latitude's values are zeroes now; the copyright's offset still holds.
        let gpsStart = 8 + 2 + 3 * 12 + 4 + 10
        #expect(out[gpsStart...].allSatisfy { $0 == 0 })
        let io = TIFFWords(bigEndian: bigEndian)
        let copyrightOffset = Int(io.u32(out, 10 + 12 + 8)!)
        #expect(Array(out[copyrightOffset..<(copyrightOffset + 8)]) == Array("Kiln Ltd".utf8))
        #expect(io.u32(out, 8 + 2 + 2 * 12) == 0, "the next-IFD offset moved up")
    }

    @Test func withoutGPSLeavesOtherEXIFAloneAndDropsGPSXMP() {
        let plain = Self.tiff(bigEndian: false, gps: false)
        #expect(ExifGPS.removing(from: plain) == plain)
        let xmpGPS = Array(#"<x:xmpmeta><rdf:Description exif:GPSLatitude="52,31N" dc:rights="Kiln"/></x:xmpmeta>"#.utf8)
        let xmpPlain = Array(#"<x:xmpmeta><rdf:Description dc:rights="Kiln"/></x:xmpmeta>"#.utf8)
        #expect(ImageMetadata(exif: plain, xmp: xmpGPS).withoutGPS == ImageMetadata(exif: plain, xmp: nil))
        #expect(ImageMetadata(exif: plain, xmp: xmpPlain).withoutGPS == ImageMetadata(exif: plain, xmp: xmpPlain))
    }

    @Test func malformedEXIFIsDroppedNotKept() {
        var cut = Self.tiff(bigEndian: false)
        cut.removeLast(30)   // the latitude's values run past the end
        #expect(ExifGPS.removing(from: cut) == nil)
        #expect(ExifGPS.removing(from: [0x49, 0x49, 42]) == nil)
        var wild = Self.tiff(bigEndian: false)
        wild[10 + 2 * 12 + 8] = 0xFF; wild[10 + 2 * 12 + 9] = 0xFF   // GPS IFD offset far outside
        #expect(ExifGPS.removing(from: wild) == nil)
        #expect(ImageMetadata(exif: wild).withoutGPS.exif == nil)
    }

    /// A GPS IFD whose entries all name the whole file: dropped, not zeroed entry by entry.
    @Test func overlappingValuesAreDropped() {
        var t = Self.tiff(bigEndian: false)
        let latitudeEntry = 8 + 2 + 3 * 12 + 4 + 10 + 2 + 12
        // count 3 RATIONALs (24 bytes) at offset 0, then a second entry doing the same
        t[latitudeEntry + 8] = 0; t[latitudeEntry + 9] = 0
        let first = Array(t[latitudeEntry..<(latitudeEntry + 12)])
        var many = t
        let gpsIFD = 8 + 2 + 3 * 12 + 4 + 10
        many[gpsIFD] = 2; many[gpsIFD + 1] = 0
        many.replaceSubrange((gpsIFD + 2)..<(gpsIFD + 14), with: first)
        #expect(ExifGPS.removing(from: many) != nil, "two entries of 24 bytes fit a file of \(many.count)")
        // Make each entry name more bytes than the file holds in total when summed.
        let count = many.count / 8 / 2 + 1
        for e in [gpsIFD + 2, gpsIFD + 14] {
            many[e + 4] = UInt8(count & 0xFF); many[e + 5] = UInt8(count >> 8 & 0xFF); many[e + 6] = 0; many[e + 7] = 0
            many[e + 8] = 0; many[e + 9] = 0; many[e + 10] = 0; many[e + 11] = 0
        }
        #expect(ExifGPS.removing(from: many) == nil)
    }
}
