import Testing
@testable import KilnModel

/// `strip:` modes and what `keep_copyright` keeps of EXIF and XMP.
@Suite struct MetadataPolicyTests {
    @Test func spellings() throws {
        #expect(MetadataPolicy(spelling: "1") == .all && MetadataPolicy(spelling: "ALL") == .all)
        #expect(MetadataPolicy(spelling: "copyright") == .keepCopyright && MetadataPolicy(spelling: "keep_copyright") == .keepCopyright)
        #expect(MetadataPolicy(spelling: "0") == MetadataPolicy.none && MetadataPolicy(spelling: "gps") == nil)
        let parser = SpecParser()
        #expect(try parser.parse("/strip:keep_copyright/a.jpg", isDecoded: true).canonical == "strip:copyright/-/a.jpg")
        #expect(try parser.parse("/strip:none/a.jpg", isDecoded: true).canonical == "strip:0/-/a.jpg")
        #expect(throws: SpecError.self) { try parser.parse("/strip:gps/a.jpg", isDecoded: true) }
    }

    /// Big-endian EXIF: IFD0 with Make, Artist (short, inline), Copyright (out of line) and a GPS IFD.
    static func exif() -> [UInt8] {
        var b: [UInt8] = [0x4D, 0x4D, 0, 42, 0, 0, 0, 8]
        func be16(_ v: Int) { b += [UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        func be32(_ v: Int) { b += [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let copyright = Array("(c) Ada 2026\0".utf8), make = Array("Cam\0".utf8), artist = Array("Ada\0".utf8)
        let valuesAt = 8 + 2 + 4 * 12 + 4
        be16(4)
        be16(0x010F); be16(2); be32(make.count); b += make                      // Make, inline
        be16(0x013B); be16(2); be32(artist.count); b += artist                  // Artist, inline
        be16(0x8298); be16(2); be32(copyright.count); be32(valuesAt)            // Copyright
        be16(0x8825); be16(4); be32(1); be32(valuesAt + copyright.count)        // GPS IFD
        be32(0)
        b += copyright
        be16(1); be16(2); be16(2); be32(2); b += Array("N\0\0\0".utf8); be32(0)  // GPSLatitudeRef
        return b
    }

    @Test func copyrightOnlyKeepsArtistAndCopyrightInANewEXIF() throws {
        let kept = try #require(ImageMetadata(exif: Self.exif()).copyrightOnly?.exif)
        let text = String(decoding: kept, as: UTF8.self)
        #expect(text.contains("(c) Ada 2026") && text.contains("Ada"))
        #expect(!text.contains("Cam") && !kept.contains(0x88))   // no Make, no GPS tag (0x8825)
        #expect(kept.starts(with: [0x49, 0x49, 42, 0, 8, 0, 0, 0]) && kept[8] == 2)   // two entries
        #expect(ImageMetadata(exif: [0x49, 0x49, 42, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0]).copyrightOnly == nil)
    }

    @Test func copyrightOnlyKeepsXMPRightsAndCreator() throws {
        let xmp = Array("""
            <x:xmpmeta><rdf:RDF><rdf:Description xmpRights:Marked="True" exif:GPSLatitude="51,30N" tiff:Make="Cam">\
            <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">(c) Ada</rdf:li></rdf:Alt></dc:rights>\
            <dc:creator><rdf:Seq><rdf:li>Ada</rdf:li></rdf:Seq></dc:creator></rdf:Description></rdf:RDF></x:xmpmeta>
            """.utf8)
        let kept = try #require(ImageMetadata(xmp: xmp).copyrightOnly?.xmp)
        let text = String(decoding: kept, as: UTF8.self)
        #expect(text.contains("<dc:rights><rdf:Alt><rdf:li xml:lang=\"x-default\">(c) Ada</rdf:li></rdf:Alt></dc:rights>"))
        #expect(text.contains("<dc:creator>") && text.contains("<xmpRights:Marked>True</xmpRights:Marked>"))
        #expect(!text.contains("GPS") && !text.contains("Cam"))
        #expect(ImageMetadata(xmp: Array("<x:xmpmeta/>".utf8)).copyrightOnly == nil)
    }
}
