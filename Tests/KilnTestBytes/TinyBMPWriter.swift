/// Writes small BMPs (and the bitmaps of ICO entries) for the decoder tests, every field under
/// the test's control: depth, header size (12 OS/2 core, 40, 108 V4, 124 V5), row order, bit
/// fields and palette.
///
/// `values` are the stored pixels, top row first, as the depth stores them: palette indices for
/// 1, 4 and 8 bits, the raw 16-bit word, 0xRRGGBB for 24 bits, 0xAARRGGBB for 32 bits.
public struct TinyBMPWriter {
    public var width: Int
    public var height: Int
    public var bitCount: Int
    public var values: [UInt32]
    public var headerSize: Int
    public var topDown: Bool
    /// BI_BITFIELDS: 5-6-5 for 16 bits; for 32 bits R, G, B in bytes 2, 1, 0 and, in a V4/V5
    /// header, alpha in byte 3 (a 40-byte header gets three masks after it, so no alpha).
    public var bitfields: Bool
    public var palette: [(UInt8, UInt8, UInt8)]

    public init(width: Int, height: Int, bitCount: Int, values: [UInt32], headerSize: Int = 40, topDown: Bool = false,
                bitfields: Bool = false, palette: [(UInt8, UInt8, UInt8)] = []) {
        self.width = width
        self.height = height
        self.bitCount = bitCount
        self.values = values
        self.headerSize = headerSize
        self.topDown = topDown
        self.bitfields = bitfields
        self.palette = palette
    }

    /// The whole file: BITMAPFILEHEADER and the bitmap.
    public func bytes() -> [UInt8] {
        let body = bitmap(icon: false, andMask: nil)
        let pixelOffset = 14 + body.count - rows().count
        return [0x42, 0x4D] + le32(14 + body.count) + [0, 0, 0, 0] + le32(pixelOffset) + body
    }

    /// The bitmap without file header; an icon's has a doubled height and the AND mask after the
    /// rows (`andMask`: true = transparent, top row first; nil writes an all-opaque mask).
    public func bitmap(icon: Bool, andMask: [Bool]?) -> [UInt8] {
        var out: [UInt8] = []
        let storedHeight = icon ? height * 2 : (topDown ? -height : height)
        if headerSize == 12 {
            out += le32(12) + le16(width) + le16(storedHeight) + le16(1) + le16(bitCount)
        } else {
            let compression = bitfields ? 3 : 0
            out += le32(headerSize) + le32(width) + le32(storedHeight) + le16(1) + le16(bitCount) + le32(compression)
            out += le32(rows().count) + le32(2835) + le32(2835) + le32(bitCount <= 8 ? palette.count : 0) + le32(0)
            let masks: [UInt32] = bitCount == 16 ? [0xF800, 0x07E0, 0x001F, 0] : [0xFF_0000, 0xFF00, 0xFF, 0xFF00_0000]
            if headerSize == 40 {
                if bitfields { out += masks[0..<3].flatMap { le32(Int($0)) } }
            } else {
                out += masks.flatMap { le32(Int($0)) }
                out += [0x42, 0x47, 0x52, 0x73]                               // 'sRGB'
                out += [UInt8](repeating: 0, count: headerSize - 60)          // endpoints, gamma, V5 fields
            }
        }
        for (r, g, b) in palette { out += headerSize == 12 ? [b, g, r] : [b, g, r, 0] }
        out += rows()
        if icon {
            let stride = (width + 31) / 32 * 4
            for y in (0..<height).reversed() {
                var row = [UInt8](repeating: 0, count: stride)
                for x in 0..<width where andMask?[y * width + x] == true { row[x / 8] |= 0x80 >> UInt8(x % 8) }
                out += row
            }
        }
        return out
    }

    /// The pixel rows in stored order, each padded to 4 bytes.
    public func rows() -> [UInt8] {
        let stride = (width * bitCount + 31) / 32 * 4
        var out: [UInt8] = []
        let order = topDown ? Array(0..<height) : Array((0..<height).reversed())
        for y in order {
            var row = [UInt8](repeating: 0, count: stride)
            for x in 0..<width {
                let v = values[y * width + x]
                switch bitCount {
                case 1, 4, 8:
                    let bit = x * bitCount
                    row[bit / 8] |= UInt8(v) << UInt8(8 - bitCount - bit % 8)
                case 16:
                    row[x * 2] = UInt8(v & 0xFF)
                    row[x * 2 + 1] = UInt8(v >> 8 & 0xFF)
                default:
                    let n = bitCount / 8
                    for i in 0..<n { row[x * n + i] = UInt8(v >> UInt32(8 * i) & 0xFF) }
                }
            }
            out += row
        }
        return out
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}
