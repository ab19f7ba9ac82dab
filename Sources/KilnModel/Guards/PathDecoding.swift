/// Percent-decoding and confinement checks for URL path segments.
///
/// Each segment is decoded on its own, so `%2F` cannot create a new segment and `%2e%2e`
/// is caught as `..`.
public enum PathDecoding {
    /// A NUL (`%00`, or a raw one) is refused: it would end the path at a C boundary.
    public static func decodeSegment(_ raw: Substring) throws(SpecError) -> String {
        if raw.utf8.contains(0) { throw .malformedPath(reason: "NUL byte (%00) in the path") }
        guard raw.contains("%") else { return String(raw) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(raw.utf8.count)
        var it = raw.utf8.makeIterator()
        while let c = it.next() {
            if c == UInt8(ascii: "%") {
                guard let h = it.next(), let l = it.next(), let hv = hex(h), let lv = hex(l) else {
                    throw .malformedPath(reason: "bad percent-encoding in '\(raw)'")
                }
                guard hv | lv != 0 else { throw .malformedPath(reason: "NUL byte (%00) in the path") }
                bytes.append(hv << 4 | lv)
            } else {
                bytes.append(c)
            }
        }
        guard let s = String(validating: bytes, as: UTF8.self) else { throw SpecError.notUTF8 }
        return s
    }

    /// Joins the remaining segments into a root-relative path, refusing anything that could escape.
    static func sourcePath(from segments: ArraySlice<Substring>, isDecoded: Bool) throws(SpecError) -> String {
        var parts: [String] = []
        for raw in segments {
            if raw.isEmpty { continue }
            let s = isDecoded ? String(raw) : try decodeSegment(raw)
            if s == ".." || s == "." { throw .forbiddenPath(reason: "'.' and '..' are not allowed in the source path") }
            if s.contains("/") || s.contains("\\") { throw .forbiddenPath(reason: "encoded slash in the source path") }
            if s.utf8.contains(0) { throw .malformedPath(reason: "NUL byte (%00) in the path") }
            parts.append(s)
        }
        guard !parts.isEmpty else { throw .missingSourcePath }
        return parts.joined(separator: "/")
    }

    private static func hex(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
