/// The copyright out of kept metadata (`strip:copyright`, `MetadataPolicy.keepCopyright`): who
/// made the picture and on what terms, and nothing else of the source's EXIF and XMP.
extension ImageMetadata {
    /// A new EXIF with IFD0's Copyright and Artist (nothing else, not even the other IFDs) and a
    /// new XMP packet with `dc:rights`, `dc:creator` and the `xmpRights:` properties; nil when
    /// the source has none of them.
    public var copyrightOnly: ImageMetadata? {
        let out = ImageMetadata(exif: exif.flatMap(ExifCopyright.extract), xmp: xmp.flatMap(XMPRights.extract))
        return out.isEmpty ? nil : out
    }
}

/// IFD0's Copyright (0x8298) and Artist (0x013B) ASCII fields, written into a TIFF of their own.
enum ExifCopyright {
    static let tags: [UInt16] = [0x013B, 0x8298]   // Artist, Copyright: TIFF's ascending order

    static func extract(_ tiff: [UInt8]) -> [UInt8]? {
        guard tiff.count >= 8 else { return nil }
        let io: TIFFWords
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): io = TIFFWords(bigEndian: false)
        case (0x4D, 0x4D): io = TIFFWords(bigEndian: true)
        default: return nil
        }
        guard io.u16(tiff, 2) == 42, let ifd0 = io.u32(tiff, 4).map(Int.init), let n = io.u16(tiff, ifd0).map(Int.init),
              ifd0 + 2 + n * 12 <= tiff.count else { return nil }
        var fields: [(tag: UInt16, value: [UInt8])] = []
        for tag in tags {
            guard let i = (0..<n).first(where: { io.u16(tiff, ifd0 + 2 + $0 * 12) == tag }) else { continue }
            let entry = ifd0 + 2 + i * 12
            guard io.u16(tiff, entry + 2) == 2, let count = io.u32(tiff, entry + 4).map(Int.init), count > 0, count <= 65_535 else { continue }
            let at = count <= 4 ? entry + 8 : io.u32(tiff, entry + 8).map(Int.init) ?? -1
            guard at >= 0, at + count <= tiff.count else { continue }
            var value = Array(tiff[at..<(at + count)])
            if value.last != 0 { value.append(0) }
            guard value.contains(where: { $0 != 0 && $0 != 0x20 }) else { continue }
            fields.append((tag, value))
        }
        guard !fields.isEmpty else { return nil }
        // Little-endian TIFF: header, IFD0 (count, entries, next 0), then the values.
        var out: [UInt8] = [0x49, 0x49, 42, 0, 8, 0, 0, 0]
        func le16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        func le32(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        le16(fields.count)
        var valueAt = 8 + 2 + fields.count * 12 + 4
        for field in fields {
            le16(Int(field.tag))
            le16(2)
            le32(field.value.count)
            if field.value.count <= 4 {
                out += field.value + [UInt8](repeating: 0, count: 4 - field.value.count)
            } else {
                le32(valueAt)
                valueAt += field.value.count
            }
        }
        le32(0)
        for field in fields where field.value.count > 4 { out += field.value }
        return out
    }
}

/// XMP's rights and creator properties, written into a packet of their own. The source packet is
/// searched, not parsed: each property as an element (`<dc:rights>…</dc:rights>`) or as an
/// attribute (`xmpRights:Marked="True"`) is copied; the rest of the packet is not.
enum XMPRights {
    static let elements = ["dc:rights", "dc:creator", "xmpRights:UsageTerms", "xmpRights:WebStatement", "xmpRights:Marked",
                           "xmpRights:Owner", "xmpRights:Certificate"]

    static func extract(_ xmp: [UInt8]) -> [UInt8]? {
        let text = String(decoding: xmp, as: UTF8.self)
        var kept: [String] = []
        for name in elements {
            if let open = text.firstRange(of: "<\(name)>"), let close = text[open.upperBound...].firstRange(of: "</\(name)>") {
                kept.append(String(text[open.lowerBound..<close.upperBound]))
            } else if let attribute = text.firstRange(of: " \(name)=\"") {
                let rest = text[attribute.upperBound...]
                guard let end = rest.firstIndex(of: "\"") else { continue }
                kept.append("<\(name)>\(rest[..<end])</\(name)>")
            }
        }
        guard !kept.isEmpty else { return nil }
        let packet = "<?xpacket begin=\"\u{FEFF}\" id=\"W5M0MpCehiHzreSzNTczkc9d\"?>"
            + "<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"><rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\">"
            + "<rdf:Description rdf:about=\"\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\" xmlns:xmpRights=\"http://ns.adobe.com/xap/1.0/rights/\">"
            + kept.joined() + "</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end=\"r\"?>"
        return Array(packet.utf8)
    }
}
