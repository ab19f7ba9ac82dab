import KilnModel

/// PNG files built byte by byte for the fast-path tests: rows filtered with a chosen filter type,
/// stored zlib blocks, IDAT split into pieces, CRCs recomputed after a deliberate corruption.
enum PNGTestFiles {
    /// `image`'s rows, each prefixed with `type` and filtered with it (PNG specification, 9.2).
    static func filtered(_ image: PixelBuffer, type: UInt8) -> [UInt8] {
        let bpp = image.channels, n = image.width * bpp
        var out: [UInt8] = []
        out.reserveCapacity((n + 1) * image.height)
        for y in 0..<image.height {
            out.append(type)
            for i in 0..<n {
                let x = Int(image.pixels[y * n + i])
                let a = i >= bpp ? Int(image.pixels[y * n + i - bpp]) : 0
                let b = y > 0 ? Int(image.pixels[(y - 1) * n + i]) : 0
                let c = y > 0 && i >= bpp ? Int(image.pixels[(y - 1) * n + i - bpp]) : 0
                let predicted: Int
                switch type {
                case 1: predicted = a
                case 2: predicted = b
                case 3: predicted = (a + b) / 2
                case 4:
                    let p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c)
                    predicted = pa <= pb && pa <= pc ? a : (pb <= pc ? b : c)
                default: predicted = 0
                }
                out.append(UInt8(truncatingIfNeeded: x - predicted))
            }
        }
        return out
    }

    /// An 8-bit PNG of colour type `colorType` with one IDAT holding `idatData`.
    static func png(width: Int, height: Int, colorType: UInt8, idatData: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [8, colorType, 0, 0, 0])
        out += chunk("IDAT", idatData)
        out += chunk("IEND", [])
        return out
    }

    /// A zlib stream of stored blocks holding `data`.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] { TinyPNGWriter.zlibStored(data) }

    /// `png` with its image data re-cut into IDAT chunks of `pieceSize` bytes.
    static func splitIDAT(_ png: [UInt8], pieceSize: Int) -> [UInt8] {
        var before: [UInt8] = [], after: [UInt8] = [], data: [UInt8] = []
        walk(png) { type, range in
            let whole = Array(png[range.lowerBound - 8 ..< range.upperBound + 4])
            if type == "IDAT" { data += png[range] } else if data.isEmpty { before += whole } else { after += whole }
        }
        var out = Array(png[0..<8]) + before
        var offset = 0
        while offset < data.count {
            let end = min(offset + pieceSize, data.count)
            out += chunk("IDAT", Array(data[offset..<end]))
            offset = end
        }
        return out + after
    }

    /// `png` with every chunk's CRC recomputed (so a corruption reaches the decompressor).
    static func fixingCRCs(_ png: [UInt8]) -> [UInt8] {
        var out = png
        walk(png) { _, range in
            let crc = crc32(Array(png[range.lowerBound - 4 ..< range.upperBound]))
            out.replaceSubrange(range.upperBound ..< range.upperBound + 4, with: be32(crc))
        }
        return out
    }

    /// Calls `body` with each chunk's type and data range, in file order.
    private static func walk(_ png: [UInt8], _ body: (String, Range<Int>) -> Void) {
        var pos = 8
        while pos + 12 <= png.count {
            let length = Int(png[pos]) << 24 | Int(png[pos + 1]) << 16 | Int(png[pos + 2]) << 8 | Int(png[pos + 3])
            guard pos + 12 + length <= png.count else { return }
            body(String(decoding: png[pos + 4 ..< pos + 8], as: UTF8.self), pos + 8 ..< pos + 8 + length)
            pos += 12 + length
        }
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] { TinyPNGWriter.chunk(type, data) }
    static func be32(_ v: UInt32) -> [UInt8] { TinyPNGWriter.be32(v) }
    static func crc32(_ data: [UInt8]) -> UInt32 { TinyPNGWriter.crc32(data) }
}
