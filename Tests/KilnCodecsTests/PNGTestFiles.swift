import KilnModel
import KilnTestBytes

/// What the fast-path tests do to PNG files beyond `TinyPNGWriter` (KilnTestBytes): rows filtered
/// with a chosen filter type, IDAT split into pieces, CRCs recomputed after a deliberate corruption.
enum PNGTestFiles {
    /// `image`'s rows, each prefixed with `type` and filtered with it (PNG specification, 9.2).
    static func filtered(_ image: PixelBuffer, type: UInt8) -> [UInt8] {
        filtered(image, types: Array(repeating: type, count: image.height))
    }

    /// Row y filtered with `types[y]`.
    static func filtered(_ image: PixelBuffer, types: [UInt8]) -> [UInt8] {
        let bpp = image.channels, n = image.width * bpp
        var out: [UInt8] = []
        out.reserveCapacity((n + 1) * image.height)
        for y in 0..<image.height {
            let type = types[y]
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
            out += TinyPNGWriter.chunk("IDAT", Array(data[offset..<end]))
            offset = end
        }
        return out + after
    }

    /// `png` with every chunk's CRC recomputed (so a corruption reaches the decompressor).
    static func fixingCRCs(_ png: [UInt8]) -> [UInt8] {
        var out = png
        walk(png) { _, range in
            let crc = TinyPNGWriter.crc32(Array(png[range.lowerBound - 4 ..< range.upperBound]))
            out.replaceSubrange(range.upperBound ..< range.upperBound + 4, with: TinyPNGWriter.be32(crc))
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
}
