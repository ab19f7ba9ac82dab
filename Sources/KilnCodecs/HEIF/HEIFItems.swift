/// The items of a HEIF file (HEIC and AVIF alike), read from its `meta` box without any codec:
/// each item's type, its properties (`ispe`, `hvcC`, `av1C`), its `dimg` references (a grid's
/// tiles) and where its data is (`iloc`, in the file or in `idat`). libheif and libavif read the
/// same boxes, but they trust `ispe`; `CodedLayout` compares it with what the coded data says.
///
/// Every read is bounds-checked; a structure that does not parse gives nil (the codec library
/// then refuses the file itself).
struct HEIFItems {
    struct Item {
        var type: String
        /// Indices (0-based) into `properties`.
        var properties: [Int] = []
        /// `dimg` references from this item (a grid's tiles, in order).
        var derivedFrom: [UInt32] = []
    }

    struct Property {
        var type: String
        /// The property's payload (after its box header).
        var payload: Range<Int>
    }

    struct Extent {
        var offset: Int
        var length: Int
    }

    let data: [UInt8]
    var primary: UInt32 = 0
    var items: [UInt32: Item] = [:]
    var properties: [Property] = []
    /// Per item: construction method (0 file, 1 idat) and extents.
    var locations: [UInt32: (method: Int, extents: [Extent])] = [:]
    var idat: Range<Int>?

    /// The parsed items of `data`, nil when the `meta` box does not parse.
    static func parse(_ data: [UInt8]) -> HEIFItems? {
        guard let meta = HEIFBoxes.metaBox(data), meta.count >= 12 else { return nil }
        var result = HEIFItems(data: data)
        let reader = Reader(data: data)
        guard let children = reader.boxes(in: (meta.lowerBound + 12)..<meta.upperBound) else { return nil }
        for (type, payload) in children {
            switch type {
            case "pitm":
                guard let p = reader.pitm(payload) else { return nil }
                result.primary = p
            case "iinf":
                guard reader.iinf(payload, into: &result) else { return nil }
            case "iref":
                guard reader.iref(payload, into: &result) else { return nil }
            case "iprp":
                guard reader.iprp(payload, into: &result) else { return nil }
            case "iloc":
                guard reader.iloc(payload, into: &result) else { return nil }
            case "idat":
                result.idat = payload
            default:
                continue
            }
        }
        return result
    }

    /// The first property of `type` associated with `item`.
    func property(_ type: String, of item: UInt32) -> Range<Int>? {
        items[item]?.properties.lazy.filter { $0 < properties.count && properties[$0].type == type }
            .first.map { properties[$0].payload }
    }

    /// The `ispe` size of `item`, nil without one.
    func storedSize(of item: UInt32) -> (width: Int, height: Int)? {
        guard let p = property("ispe", of: item), p.count >= 12 else { return nil }
        return (Self.u32(data, p.lowerBound + 4), Self.u32(data, p.lowerBound + 8))
    }

    /// The length of the item's data (its extents; a length 0 runs to the end of the file or
    /// `idat`), nil when it has no location.
    func dataLength(_ item: UInt32) -> Int? {
        guard let location = locations[item] else { return nil }
        let whole = location.method == 1 ? idat?.count ?? 0 : data.count
        return location.extents.reduce(0) { sum, e in
            let n = e.length == 0 ? max(0, whole - e.offset) : min(e.length, whole)
            return min(sum + n, Int.max / 2)
        }
    }

    /// The item's data (its extents joined), nil when it is not in the file or over `limit`.
    func itemData(_ item: UInt32, limit: Int = 64 << 20) -> [UInt8]? {
        guard let location = locations[item] else { return nil }
        var bytes: [UInt8] = []
        let whole = location.method == 1 ? idat : 0..<data.count
        guard let whole, location.method <= 1 else { return nil }
        for extent in location.extents {
            // Offsets and lengths are up to 64-bit: compared, never added past the file.
            guard extent.offset <= whole.count else { return nil }
            let start = whole.lowerBound + extent.offset
            let available = whole.upperBound - start
            let length = extent.length == 0 ? available : extent.length
            guard length <= available, length <= limit - bytes.count else { return nil }
            bytes += data[start..<(start + length)]
        }
        return bytes
    }

    static func u32(_ d: [UInt8], _ i: Int) -> Int {
        Int(d[i]) << 24 | Int(d[i + 1]) << 16 | Int(d[i + 2]) << 8 | Int(d[i + 3])
    }

    /// Box walking with bounds checks.
    private struct Reader {
        let data: [UInt8]

        func uint(_ at: Int, _ size: Int, end: Int) -> Int? {
            guard size >= 0, size <= 8, at >= 0, at + size <= end else { return nil }
            var v = 0
            for k in 0..<size { v = v << 8 | Int(data[at + k]) }
            return v >= 0 ? v : nil
        }

        func type(_ at: Int) -> String {
            String(decoding: data[at..<at + 4], as: UTF8.self)
        }

        /// The boxes in `range`: type and payload.
        func boxes(in range: Range<Int>) -> [(String, Range<Int>)]? {
            var out: [(String, Range<Int>)] = []
            var pos = range.lowerBound
            while pos + 8 <= range.upperBound {
                guard var size = uint(pos, 4, end: range.upperBound) else { return nil }
                var header = 8
                if size == 1 {
                    guard let large = uint(pos + 8, 8, end: range.upperBound) else { return nil }
                    size = large
                    header = 16
                } else if size == 0 {
                    size = range.upperBound - pos
                }
                guard size >= header, size <= range.upperBound - pos else { return nil }
                out.append((type(pos + 4), (pos + header)..<(pos + size)))
                pos += size
            }
            return out
        }

        func pitm(_ p: Range<Int>) -> UInt32? {
            guard let version = uint(p.lowerBound, 1, end: p.upperBound),
                  let id = uint(p.lowerBound + 4, version == 0 ? 2 : 4, end: p.upperBound) else { return nil }
            return UInt32(truncatingIfNeeded: id)
        }

        func iinf(_ p: Range<Int>, into result: inout HEIFItems) -> Bool {
            guard let version = uint(p.lowerBound, 1, end: p.upperBound) else { return false }
            let start = p.lowerBound + 4 + (version == 0 ? 2 : 4)
            guard start <= p.upperBound, let entries = boxes(in: start..<p.upperBound) else { return false }
            for (type, e) in entries where type == "infe" {
                guard let v = uint(e.lowerBound, 1, end: e.upperBound) else { return false }
                guard v >= 2 else { continue }   // versions 0 and 1 carry no item type
                let idSize = v == 2 ? 2 : 4
                guard let id = uint(e.lowerBound + 4, idSize, end: e.upperBound),
                      e.lowerBound + 6 + idSize + 4 <= e.upperBound else { return false }
                result.items[UInt32(truncatingIfNeeded: id), default: Item(type: "")].type = self.type(e.lowerBound + 6 + idSize)
            }
            return true
        }

        func iref(_ p: Range<Int>, into result: inout HEIFItems) -> Bool {
            guard let version = uint(p.lowerBound, 1, end: p.upperBound),
                  p.lowerBound + 4 <= p.upperBound,
                  let refs = boxes(in: (p.lowerBound + 4)..<p.upperBound) else { return false }
            let idSize = version == 0 ? 2 : 4
            for (type, r) in refs where type == "dimg" {
                guard let from = uint(r.lowerBound, idSize, end: r.upperBound),
                      let count = uint(r.lowerBound + idSize, 2, end: r.upperBound) else { return false }
                var tiles: [UInt32] = []
                for k in 0..<count {
                    guard let to = uint(r.lowerBound + idSize + 2 + k * idSize, idSize, end: r.upperBound) else { return false }
                    tiles.append(UInt32(truncatingIfNeeded: to))
                }
                result.items[UInt32(truncatingIfNeeded: from), default: Item(type: "")].derivedFrom += tiles
            }
            return true
        }

        func iprp(_ p: Range<Int>, into result: inout HEIFItems) -> Bool {
            guard let children = boxes(in: p) else { return false }
            for (type, c) in children {
                if type == "ipco" {
                    guard let props = boxes(in: c) else { return false }
                    result.properties = props.map { Property(type: $0.0, payload: $0.1) }
                } else if type == "ipma" {
                    guard let version = uint(c.lowerBound, 1, end: c.upperBound),
                          let flags = uint(c.lowerBound + 1, 3, end: c.upperBound),
                          let count = uint(c.lowerBound + 4, 4, end: c.upperBound) else { return false }
                    var pos = c.lowerBound + 8
                    for _ in 0..<min(count, c.count) {
                        let idSize = version < 1 ? 2 : 4
                        guard let id = uint(pos, idSize, end: c.upperBound),
                              let n = uint(pos + idSize, 1, end: c.upperBound) else { return false }
                        pos += idSize + 1
                        var indices: [Int] = []
                        for _ in 0..<n {
                            let wide = flags & 1 != 0
                            guard let v = uint(pos, wide ? 2 : 1, end: c.upperBound) else { return false }
                            pos += wide ? 2 : 1
                            let index = v & (wide ? 0x7FFF : 0x7F)
                            if index > 0 { indices.append(index - 1) }
                        }
                        result.items[UInt32(truncatingIfNeeded: id), default: Item(type: "")].properties += indices
                    }
                }
            }
            return true
        }

        func iloc(_ p: Range<Int>, into result: inout HEIFItems) -> Bool {
            let end = p.upperBound
            guard let version = uint(p.lowerBound, 1, end: end), version <= 2,
                  let sizes = uint(p.lowerBound + 4, 2, end: end) else { return false }
            let offsetSize = sizes >> 12, lengthSize = (sizes >> 8) & 15, baseSize = (sizes >> 4) & 15
            let indexSize = version > 0 ? sizes & 15 : 0
            var pos = p.lowerBound + 6
            guard let count = uint(pos, version < 2 ? 2 : 4, end: end) else { return false }
            pos += version < 2 ? 2 : 4
            for _ in 0..<min(count, p.count) {
                guard let id = uint(pos, version < 2 ? 2 : 4, end: end) else { return false }
                pos += version < 2 ? 2 : 4
                var method = 0
                if version > 0 {
                    guard let m = uint(pos, 2, end: end) else { return false }
                    method = m & 15
                    pos += 2
                }
                guard let base = uint(pos + 2, baseSize, end: end),
                      let extentCount = uint(pos + 2 + baseSize, 2, end: end) else { return false }
                pos += 4 + baseSize
                var extents: [Extent] = []
                for _ in 0..<extentCount {
                    pos += indexSize
                    guard let offset = uint(pos, offsetSize, end: end),
                          let length = uint(pos + offsetSize, lengthSize, end: end) else { return false }
                    pos += offsetSize + lengthSize
                    let (sum, overflow) = base.addingReportingOverflow(offset)
                    guard !overflow else { return false }
                    extents.append(Extent(offset: sum, length: length))
                }
                result.locations[UInt32(truncatingIfNeeded: id)] = (method, extents)
            }
            return true
        }
    }
}
