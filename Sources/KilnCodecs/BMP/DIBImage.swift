import KilnModel

/// A device-independent bitmap: a BITMAPINFOHEADER (40 bytes) or one of its relatives (OS/2 core
/// 12, V2 52, V3 56, OS/2 2.x 64, V4 108, V5 124), its colour masks and palette, and the pixel
/// rows. The body of a BMP file (`BMPDecoder`) and of an ICO entry stored as a bitmap (`ICODecoder`).
///
/// - Depths 1, 4 and 8 (palette; an index beyond the palette paints black), 16 (5-5-5 unless
///   BI_BITFIELDS gives masks), 24 and 32 (B-G-R order unless masks say otherwise).
///   BI_RLE8 and BI_RLE4 (`DIBImage+RLE`) are decoded; embedded JPEG/PNG are refused as `.unsupported`.
/// - Rows are bottom-up unless the height is negative (top-down). Each row is padded to 4 bytes.
/// - Alpha: a 32- or 16-bit image with an alpha mask (BI_BITFIELDS, BI_ALPHABITFIELDS, or a V4/V5
///   header) is RGBA; if every alpha is 0 it is made opaque, as browsers do. An icon's bitmap
///   (`icon: true`) has a doubled height holding the 1-bit AND mask after the colour rows; it is
///   always RGBA: 32-bit icons use their alpha (the mask when every alpha is 0), others the mask.
/// - Every offset is checked against the bytes: a header, masks or palette that run past the end
///   are `.corrupt`, and so are pixel rows shorter than width × height need ("is truncated").
struct DIBImage {
    var format: String
    var width: Int
    var height: Int
    var topDown: Bool
    var bitCount: Int
    /// Red, green, blue and alpha masks (16- and 32-bit images).
    var masks: [UInt32]
    /// R, G, B triples.
    var palette: [UInt8]
    /// Where the first stored row starts.
    var pixelOffset: Int
    var icon: Bool
    /// Whether the decoded image has an alpha channel (icons always do).
    var hasAlpha: Bool
    /// BI_RLE8 or BI_RLE4 (`bitCount` says which).
    var runLength = false

    var stride: Int { (width * bitCount + 31) / 32 * 4 }
    var maskStride: Int { (width + 31) / 32 * 4 }

    /// Reads the header at `offset`. `pixelOffset` is the BMP file header's; nil for an icon,
    /// whose rows follow the palette.
    static func parse(_ data: [UInt8], at offset: Int, pixelOffset: Int?, icon: Bool, format: String) throws(DecodeError) -> DIBImage {
        let reader = ByteReader(data: data, format: format)
        let size = try reader.u32(offset)
        guard [12, 40, 52, 56, 64, 108, 124].contains(size) else { throw .corrupt("\(format) has a bitmap header of \(size) bytes") }
        guard offset + size <= data.count else { throw .corrupt("\(format) is truncated") }
        let core = size == 12
        let width: Int, bitCount: Int, compression: Int, used: Int
        var height: Int
        if core {
            width = try reader.u16(offset + 4)
            height = try reader.u16(offset + 6)
            bitCount = try reader.u16(offset + 10)
            compression = 0
            used = 0
        } else {
            width = Int(Int32(truncatingIfNeeded: try reader.u32(offset + 4)))
            height = Int(Int32(truncatingIfNeeded: try reader.u32(offset + 8)))
            bitCount = try reader.u16(offset + 14)
            compression = try reader.u32(offset + 16)
            used = try reader.u32(offset + 32)
        }
        guard width > 0, height != 0 else { throw .corrupt("\(format) has no pixels (\(width)x\(height))") }
        let topDown = height < 0 && !icon
        height = abs(height)
        if icon {
            height /= 2
            guard height > 0 else { throw .corrupt("\(format) has no pixels (\(width)x0)") }
        }
        guard [1, 4, 8, 16, 24, 32].contains(bitCount) else { throw .unsupported("\(format) of \(bitCount) bits a pixel") }
        switch compression {
        case 0, 3, 6: break
        case 1, 2:
            guard bitCount == (compression == 1 ? 8 : 4), !topDown, !icon else {
                throw .corrupt("\(format) RLE\(compression == 1 ? 8 : 4) on a \(topDown ? "top-down " : "")\(bitCount)-bit \(icon ? "icon" : "image")")
            }
        default: throw .unsupported("\(format) compression \(compression)")
        }
        guard compression == 0 || compression == 1 || compression == 2 || bitCount == 16 || bitCount == 32 else { throw .corrupt("\(format) bit fields on a \(bitCount)-bit image") }
        var cursor = offset + size
        var masks: [UInt32] = bitCount == 16 ? [0x7C00, 0x03E0, 0x001F, 0] : [0xFF_0000, 0xFF00, 0xFF, icon ? 0xFF00_0000 : 0]
        if (compression == 3 || compression == 6) && size == 40 {
            let count = compression == 6 ? 4 : 3
            for i in 0..<count { masks[i] = UInt32(try reader.u32(cursor + 4 * i)) }
            cursor += 4 * count
        } else if size >= 52 && (compression == 3 || compression == 6) {
            for i in 0..<(size >= 56 ? 4 : 3) { masks[i] = UInt32(try reader.u32(offset + 40 + 4 * i)) }
        } else if size >= 108 && bitCount == 32 {
            masks[3] = UInt32(try reader.u32(offset + 52))   // a V4/V5 header's alpha mask, as browsers read it
        }
        var palette: [UInt8] = []
        if bitCount <= 8 {
            let entrySize = core ? 3 : 4
            var entries = min(used == 0 ? 1 << bitCount : used, 1 << bitCount)
            if let pixelOffset, pixelOffset > cursor { entries = min(entries, (pixelOffset - cursor) / entrySize) }   // OS/2 files say nothing
            guard cursor + entries * entrySize <= data.count else { throw .corrupt("\(format) palette is truncated") }
            palette.reserveCapacity(entries * 3)
            for i in 0..<entries {
                let p = cursor + i * entrySize
                palette += [data[p + 2], data[p + 1], data[p]]
            }
            cursor += entries * entrySize
        }
        let start = pixelOffset ?? cursor
        guard start >= 0, start <= data.count else { throw .corrupt("\(format) pixel data offset \(start) is past the end") }
        let alpha = icon || (bitCount >= 16 && masks[3] != 0)
        return DIBImage(format: format, width: width, height: height, topDown: topDown, bitCount: bitCount, masks: masks,
                        palette: palette, pixelOffset: start, icon: icon, hasAlpha: alpha, runLength: compression == 1 || compression == 2)
    }

    /// The pixels (check the limits against the size first): RGBA when `hasAlpha`, else RGB.
    func decode(_ data: [UInt8]) throws(DecodeError) -> PixelBuffer {
        if runLength { return try decodeRunLength(data) }
        let rows = stride.multipliedReportingOverflow(by: height)
        guard !rows.overflow, rows.partialValue <= data.count - pixelOffset else { throw .corrupt("\(format) is truncated") }
        let maskStart = pixelOffset + rows.partialValue
        let hasMask = icon && maskStart + maskStride * height <= data.count
        guard hasMask || !icon || bitCount == 32 else { throw .corrupt("\(format) is truncated") }
        let channels = hasAlpha ? 4 : 3
        var out = [UInt8](repeating: 0, count: width * height * channels)
        let fields = masks.map(BitField.init)
        var anyAlpha = false
        for y in 0..<height {
            let row = pixelOffset + (topDown ? y : height - 1 - y) * stride
            var o = y * width * channels
            for x in 0..<width {
                var r: UInt8 = 0, g: UInt8 = 0, b: UInt8 = 0, a: UInt8 = 255
                switch bitCount {
                case 1, 4, 8:
                    let bit = x * bitCount
                    let index = Int(data[row + bit / 8] >> (8 - bitCount - bit % 8)) & ((1 << bitCount) - 1)
                    if index * 3 + 2 < palette.count { r = palette[index * 3]; g = palette[index * 3 + 1]; b = palette[index * 3 + 2] }
                case 24:
                    let p = row + x * 3
                    b = data[p]; g = data[p + 1]; r = data[p + 2]
                default:
                    let p = row + x * bitCount / 8
                    var v = UInt32(data[p]) | UInt32(data[p + 1]) << 8
                    if bitCount == 32 { v |= UInt32(data[p + 2]) << 16 | UInt32(data[p + 3]) << 24 }
                    r = fields[0].value(v); g = fields[1].value(v); b = fields[2].value(v)
                    if hasAlpha { a = fields[3].mask == 0 ? 255 : fields[3].value(v) }
                }
                if a != 0 { anyAlpha = true }
                out[o] = r; out[o + 1] = g; out[o + 2] = b
                if channels == 4 { out[o + 3] = a }
                o += channels
            }
        }
        let useMask = icon && (bitCount < 32 || !anyAlpha)
        if hasAlpha && !anyAlpha && !useMask {
            for i in Swift.stride(from: 3, to: out.count, by: 4) { out[i] = 255 }
        }
        if useMask {
            for y in 0..<height {
                let row = maskStart + (height - 1 - y) * maskStride
                for x in 0..<width {
                    let transparent = hasMask && data[row + x / 8] & (0x80 >> UInt8(x % 8)) != 0
                    out[(y * width + x) * 4 + 3] = transparent ? 0 : 255
                }
            }
        }
        return PixelBuffer(width: width, height: height, channels: channels, pixels: out)
    }
}

/// One colour mask of a 16- or 32-bit bitmap: its shift and width, and the value it selects scaled to 8 bits.
struct BitField {
    var mask: UInt32
    var shift: UInt32
    var bits: UInt32

    init(_ mask: UInt32) {
        self.mask = mask
        shift = mask == 0 ? 0 : UInt32(mask.trailingZeroBitCount)
        bits = UInt32((~(mask >> shift)).trailingZeroBitCount)
    }

    func value(_ pixel: UInt32) -> UInt8 {
        guard bits > 0 else { return 0 }
        let v = (pixel & mask) >> shift
        if bits >= 8 { return UInt8(truncatingIfNeeded: v >> (bits - 8)) }
        let top: UInt32 = (1 << bits) - 1
        return UInt8(((v & top) * 255 + top / 2) / top)
    }
}
