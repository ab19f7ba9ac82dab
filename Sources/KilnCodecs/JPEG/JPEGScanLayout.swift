/// The scan structure of a progressive Huffman JPEG (SOF2), read from its markers without
/// entropy decoding: the frame's components with their sampling factors and, for each SOS, its
/// components, spectral range (Ss...Se), successive-approximation bits (Ah, Al) and the bytes it
/// spans (the SOS marker through the end of its entropy-coded data).
///
/// Used by `ProgressiveScanPruner`. Anything unexpected makes `parse` return nil (the caller then
/// decodes the whole stream and libjpeg judges it): another frame type, arithmetic coding, a
/// DNL or unknown marker, a second SOI or frame, a segment running past the end, inconsistent
/// SOS parameters, more than `maxScans` scans, or no EOI. Every read is bounds-checked; every loop
/// advances by at least one byte.
struct JPEGScanLayout {
    struct Component {
        var id: UInt8
        var h: Int
        var v: Int
    }

    struct Scan {
        /// Indices into `components`.
        var components: [Int]
        var ss: Int, se: Int, ah: Int, al: Int
        /// From the SOS marker's first 0xFF to the first 0xFF of the marker that ends its data.
        var bytes: Range<Int>

        /// The zigzag coefficient indices Ss...Se as bits.
        var band: UInt64 {
            let width = se - ss + 1
            let ones: UInt64 = width >= 64 ? ~0 : (UInt64(1) << UInt64(width)) - 1
            return ones << UInt64(ss)
        }
    }

    var components: [Component]
    var scans: [Scan]
    /// The index just past EOI; bytes after it are not part of the image.
    var end: Int

    /// More scans than TurboJPEG's `TJFLAG_LIMITSCANS` allows: such files are left to it to refuse.
    static let maxScans = 500

    /// The layout of a progressive Huffman JPEG, nil for anything else or on any doubt.
    static func parse(_ data: UnsafeRawBufferPointer) -> JPEGScanLayout? {
        guard data.count >= 4, data[0] == 0xFF, data[1] == 0xD8 else { return nil }
        var components: [Component]?
        var scans: [Scan] = []
        var pos = 2
        while pos < data.count {
            let markerStart = pos
            guard data[pos] == 0xFF else { return nil }
            while pos < data.count && data[pos] == 0xFF { pos += 1 }   // fill bytes
            guard pos < data.count else { return nil }
            let marker = data[pos]
            pos += 1
            if marker == 0xD9 {
                guard let components, !scans.isEmpty else { return nil }
                return JPEGScanLayout(components: components, scans: scans, end: pos)
            }
            guard pos + 2 <= data.count else { return nil }
            let length = Int(data[pos]) << 8 | Int(data[pos + 1])
            guard length >= 2, pos + length <= data.count else { return nil }
            let body = pos + 2 ..< pos + length
            pos += length
            switch marker {
            case 0xC2:
                guard components == nil, let parsed = frameComponents(data, body) else { return nil }
                components = parsed
            case 0xDA:
                guard let components, scans.count < maxScans,
                      var scan = scanHeader(data, body, components: components) else { return nil }
                guard let dataEnd = entropyDataEnd(data, from: pos) else { return nil }
                scan.bytes = markerStart ..< dataEnd
                scans.append(scan)
                pos = dataEnd
            case 0xC4, 0xDB, 0xDD, 0xFE, 0xE0...0xEF:
                break   // tables, restart interval, comments, APPn: kept as they are
            default:
                return nil   // other frames (baseline, lossless, arithmetic), DAC, DNL, SOI, RSTn, reserved
            }
        }
        return nil   // no EOI
    }

    /// SOF2: precision, height, width, Nf, then Nf × (id, H<<4|V, Tq).
    private static func frameComponents(_ data: UnsafeRawBufferPointer, _ body: Range<Int>) -> [Component]? {
        guard body.count >= 6 else { return nil }
        let count = Int(data[body.lowerBound + 5])
        guard (1...4).contains(count), body.count == 6 + 3 * count else { return nil }
        var components: [Component] = []
        for index in 0..<count {
            let at = body.lowerBound + 6 + 3 * index
            let id = data[at], h = Int(data[at + 1] >> 4), v = Int(data[at + 1] & 0x0F)
            guard (1...4).contains(h), (1...4).contains(v), !components.contains(where: { $0.id == id }) else { return nil }
            components.append(Component(id: id, h: h, v: v))
        }
        return components
    }

    /// SOS: Ns, Ns × (Cs, Td<<4|Ta), Ss, Se, Ah<<4|Al; checked as libjpeg's progressive decoder does.
    private static func scanHeader(_ data: UnsafeRawBufferPointer, _ body: Range<Int>, components: [Component]) -> Scan? {
        guard body.count >= 1 else { return nil }
        let count = Int(data[body.lowerBound])
        guard (1...4).contains(count), body.count == 4 + 2 * count else { return nil }
        var indices: [Int] = []
        for index in 0..<count {
            let id = data[body.lowerBound + 1 + 2 * index]
            guard let component = components.firstIndex(where: { $0.id == id }), !indices.contains(component) else { return nil }
            indices.append(component)
        }
        let tail = body.lowerBound + 1 + 2 * count
        let ss = Int(data[tail]), se = Int(data[tail + 1])
        let ah = Int(data[tail + 2] >> 4), al = Int(data[tail + 2] & 0x0F)
        guard ss <= se, se <= 63, ah <= 13, al <= 13 else { return nil }
        if ss == 0 {
            guard se == 0 else { return nil }          // a DC scan carries only the DC coefficient
        } else {
            guard count == 1 else { return nil }       // AC scans are not interleaved
        }
        return Scan(components: indices, ss: ss, se: se, ah: ah, al: al, bytes: 0..<0)
    }

    /// Where the entropy-coded data starting at `start` end: the first 0xFF that is neither
    /// byte stuffing (0xFF00) nor a restart marker (0xFFD0...0xFFD7). nil when the data run to the end.
    private static func entropyDataEnd(_ data: UnsafeRawBufferPointer, from start: Int) -> Int? {
        var pos = start
        let last = data.count - 1
        while pos < last {
            if data[pos] != 0xFF {
                pos += 1
                continue
            }
            let next = data[pos + 1]
            if next == 0x00 || (0xD0...0xD7).contains(next) {
                pos += 2
            } else {
                return pos   // a marker, or fill bytes before one
            }
        }
        return nil
    }
}
