import KilnModel

extension DIBImage {
    /// Decodes BI_RLE8 / BI_RLE4 pixel data (bottom-up, as the format requires): encoded runs
    /// (a count and one index, or for RLE4 two alternating indices) and escapes: 0 end of line,
    /// 1 end of bitmap, 2 a delta (right, up), 3...255 that many literal indices padded to 16 bits.
    ///
    /// Pixels the runs never reach (skipped by a delta or an early end of line) take palette entry
    /// 0, as Pillow and Windows draw them (browsers make them transparent). Runs past the right
    /// edge are clipped, so the work is the pixels plus the file's bytes. Data that ends before
    /// the end-of-bitmap escape or the last row is "BMP is truncated".
    func decodeRunLength(_ data: [UInt8]) throws(DecodeError) -> PixelBuffer {
        var out = [UInt8](repeating: 0, count: width * height * 3)
        let background: [UInt8] = palette.count >= 3 ? Array(palette[0..<3]) : [0, 0, 0]
        if background != [0, 0, 0] {
            for i in Swift.stride(from: 0, to: out.count, by: 3) { out.replaceSubrange(i..<i + 3, with: background) }
        }
        let nibbles = bitCount == 4
        var x = 0, row = 0, pos = pixelOffset
        func put(_ index: Int) {
            guard x < width, row < height else { return }
            let o = ((height - 1 - row) * width + x) * 3
            if index * 3 + 2 < palette.count {
                out[o] = palette[index * 3]
                out[o + 1] = palette[index * 3 + 1]
                out[o + 2] = palette[index * 3 + 2]
            } else {
                out[o] = 0
                out[o + 1] = 0
                out[o + 2] = 0
            }
        }
        decoding: while row < height {
            guard pos + 2 <= data.count else { throw .corrupt("\(format) is truncated") }
            let count = Int(data[pos]), value = Int(data[pos + 1])
            pos += 2
            if count > 0 {
                for i in 0..<min(count, max(0, width - x)) {
                    put(nibbles ? (i % 2 == 0 ? value >> 4 : value & 0x0F) : value)
                    x += 1
                }
                continue
            }
            switch value {
            case 0:
                x = 0
                row += 1
            case 1:
                break decoding
            case 2:
                guard pos + 2 <= data.count else { throw .corrupt("\(format) is truncated") }
                x += Int(data[pos])
                row += Int(data[pos + 1])
                pos += 2
            default:
                let bytes = nibbles ? (value + 1) / 2 : value
                guard pos + bytes <= data.count else { throw .corrupt("\(format) is truncated") }
                for i in 0..<min(value, max(0, width - x)) {
                    let byte = Int(data[pos + (nibbles ? i / 2 : i)])
                    put(nibbles ? (i % 2 == 0 ? byte >> 4 : byte & 0x0F) : byte)
                    x += 1
                }
                pos += bytes + (bytes & 1)
            }
        }
        return PixelBuffer(width: width, height: height, channels: 3, pixels: out)
    }
}
