/// Whether an image file's own structure shows that it ends where its bytes end: for a body whose
/// length the transfer did not prove (an HTTP answer without `Content-Length`, not chunked, cut
/// by a closed connection), the only evidence that nothing is missing.
///
/// Structure only (no decoding, no checksums), linear in the size:
/// - GIF: the blocks (extensions, images with their colour tables and data sub-blocks) run up to
///   the trailer byte 0x3B.
/// - JPEG: the segments and at least one scan (entropy-coded data walked marker by marker) run
///   up to the EOI marker after the last scan.
/// - PNG: the chunks (their lengths) run up to `IEND`.
/// - WebP: the RIFF size covers the bytes (`RIFF` size `WEBP`).
/// - AVIF, HEIC: the top-level ISOBMFF boxes, from `ftyp` on, cover the file exactly and include
///   `meta` and `mdat` (a box "to the end of the file", size 0, proves nothing).
/// Anything else is not proven complete.
public enum ImageCompleteness {
    public enum Verdict: Equatable, Sendable {
        case complete
        /// Why the bytes are not proven whole (cut short, or not a format that can say).
        case unproven(String)
    }

    public static func check(_ bytes: [UInt8]) -> Verdict {
        bytes.withUnsafeBufferPointer { b in
            if b.starts(with: Array("GIF8".utf8)) { return gif(b) }
            if b.count >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF { return jpeg(b) }
            if b.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return png(b) }
            if b.count >= 12 && b.starts(with: Array("RIFF".utf8)) && Array(b[8..<12]) == Array("WEBP".utf8) { return riff(b) }
            if b.count >= 8 && Array(b[4..<8]) == Array("ftyp".utf8) { return isobmff(b) }
            return .unproven("not a GIF, JPEG, PNG, WebP, AVIF or HEIC file")
        }
    }

    static func gif(_ b: UnsafeBufferPointer<UInt8>) -> Verdict {
        guard b.count >= 13 else { return .unproven("a GIF cut in its header") }
        var i = 13
        if b[10] & 0x80 != 0 { i += 3 << ((Int(b[10]) & 7) + 1) }
        while i < b.count {
            switch b[i] {
            case 0x3B:
                return .complete
            case 0x21:
                i += 2
                guard skipSubBlocks(b, &i) else { return .unproven("a GIF cut in an extension") }
            case 0x2C:
                guard i + 10 <= b.count else { return .unproven("a GIF cut in an image descriptor") }
                let packed = b[i + 9]
                i += 10
                if packed & 0x80 != 0 { i += 3 << ((Int(packed) & 7) + 1) }
                i += 1  // LZW minimum code size
                guard skipSubBlocks(b, &i) else { return .unproven("a GIF cut in a frame's data") }
            default:
                return .unproven("a GIF with an unknown block 0x\(String(b[i], radix: 16)) at byte \(i)")
            }
        }
        return .unproven("a GIF without its trailer (0x3B)")
    }

    /// Skips data sub-blocks up to and including the terminator; false when the bytes end first.
    private static func skipSubBlocks(_ b: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> Bool {
        while i < b.count {
            let n = Int(b[i])
            i += 1
            if n == 0 { return true }
            i += n
        }
        return false
    }

    static func jpeg(_ b: UnsafeBufferPointer<UInt8>) -> Verdict {
        var i = 2
        var scans = 0
        while true {
            // A marker: 0xFF (fill bytes allowed), then its code.
            guard i < b.count, b[i] == 0xFF else {
                return .unproven(i >= b.count ? "a JPEG without its EOI marker" : "a JPEG with bytes between segments at \(i)")
            }
            while i < b.count && b[i] == 0xFF { i += 1 }
            guard i < b.count else { return .unproven("a JPEG without its EOI marker") }
            let code = b[i]
            i += 1
            if code == 0xD9 {
                return scans > 0 ? .complete : .unproven("a JPEG that ends before any scan")
            }
            if (0xD0...0xD7).contains(code) || code == 0x01 { continue }
            guard i + 2 <= b.count else { return .unproven("a JPEG cut in a segment") }
            let length = Int(b[i]) << 8 | Int(b[i + 1])
            guard length >= 2 else { return .unproven("a JPEG segment of length \(length)") }
            i += length
            guard i <= b.count else { return .unproven("a JPEG cut in a segment") }
            if code == 0xDA {
                scans += 1
                // Entropy-coded data: up to a marker other than a stuffed 0xFF00 or a restart.
                while true {
                    guard i + 1 < b.count else { return .unproven("a JPEG cut in a scan") }
                    if b[i] == 0xFF, b[i + 1] != 0x00, !(0xD0...0xD7).contains(b[i + 1]), b[i + 1] != 0xFF { break }
                    i += 1
                }
            }
        }
    }

    static func png(_ b: UnsafeBufferPointer<UInt8>) -> Verdict {
        var i = 8
        while i + 8 <= b.count {
            let length = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            let isEnd = b[i + 4] == 0x49 && b[i + 5] == 0x45 && b[i + 6] == 0x4E && b[i + 7] == 0x44
            i += 12 + length
            guard i <= b.count else { return .unproven("a PNG cut in a chunk") }
            if isEnd { return .complete }
        }
        return .unproven("a PNG without its IEND chunk")
    }

    static func riff(_ b: UnsafeBufferPointer<UInt8>) -> Verdict {
        let size = Int(b[4]) | Int(b[5]) << 8 | Int(b[6]) << 16 | Int(b[7]) << 24
        guard size >= 4 else { return .unproven("a WebP with a RIFF size of \(size)") }
        return 8 + size <= b.count ? .complete : .unproven("a WebP of \(b.count) bytes whose RIFF size says \(8 + size)")
    }

    static func isobmff(_ b: UnsafeBufferPointer<UInt8>) -> Verdict {
        var i = 0
        var types: Set<String> = []
        while i < b.count {
            guard i + 8 <= b.count else { return .unproven("an ISOBMFF file cut in a box header") }
            var size = Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3])
            if size == 1 {
                guard i + 16 <= b.count else { return .unproven("an ISOBMFF file cut in a box header") }
                var large: UInt64 = 0
                for k in 8..<16 { large = large << 8 | UInt64(b[i + k]) }
                guard large <= UInt64(Int.max / 2) else { return .unproven("an ISOBMFF box of \(large) bytes") }
                size = Int(large)
                guard size >= 16 else { return .unproven("an ISOBMFF box of \(size) bytes") }
            } else if size == 0 {
                return .unproven("an ISOBMFF box that runs to the end of the file")
            } else if size < 8 {
                return .unproven("an ISOBMFF box of \(size) bytes")
            }
            types.insert(String(decoding: b[(i + 4)..<(i + 8)], as: UTF8.self))
            i += size
        }
        guard i == b.count else { return .unproven("an ISOBMFF file of \(b.count) bytes whose boxes need \(i)") }
        // A file cut exactly between two boxes: the image needs its `meta` and its `mdat`.
        return types.contains("meta") && types.contains("mdat") ? .complete : .unproven("an ISOBMFF file without meta and mdat boxes")
    }
}
