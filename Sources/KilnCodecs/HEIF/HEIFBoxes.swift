/// The little of HEIF's box structure that libheif 1.15's API does not tell: whether the file has
/// `irot` or `imir` properties (libheif applies them while decoding, so an EXIF orientation must
/// then not be applied again).
///
/// Walks the top-level boxes to `meta`, then looks in it for a 9-byte `irot` or `imir` box
/// (size 9: header, version/flags, one byte) as found in `iprp/ipco`. Every read is bounds-checked;
/// a malformed file simply gives false (libheif refuses it anyway).
enum HEIFBoxes {
    static func hasTransforms(_ data: [UInt8]) -> Bool {
        guard let meta = metaBox(data) else { return false }
        let patterns: [[UInt8]] = [[0, 0, 0, 9] + Array("irot".utf8), [0, 0, 0, 9] + Array("imir".utf8)]
        var i = meta.lowerBound
        while i + 8 <= meta.upperBound {
            if data[i] == 0 && data[i + 1] == 0 && data[i + 2] == 0 && data[i + 3] == 9 {
                let slice = data[i..<(i + 8)]
                if patterns.contains(where: { slice.elementsEqual($0) }) { return true }
            }
            i += 1
        }
        return false
    }

    /// The byte range of the top-level `meta` box, nil when there is none.
    static func metaBox(_ data: [UInt8]) -> Range<Int>? {
        var pos = 0
        while pos + 8 <= data.count {
            var size = Int(data[pos]) << 24 | Int(data[pos + 1]) << 16 | Int(data[pos + 2]) << 8 | Int(data[pos + 3])
            let isMeta = data[pos + 4] == 0x6D && data[pos + 5] == 0x65 && data[pos + 6] == 0x74 && data[pos + 7] == 0x61
            if size == 1 {
                guard pos + 16 <= data.count else { return nil }
                var large = 0
                for k in 8..<16 { large = large << 8 | Int(data[pos + k]) }
                guard large >= 16, large <= data.count - pos else { return nil }
                size = large
            } else if size == 0 {
                size = data.count - pos
            }
            guard size >= 8, size <= data.count - pos else { return nil }
            if isMeta { return pos..<(pos + size) }
            pos += size
        }
        return nil
    }
}
