/// Writes ICO (and CUR) files for the decoder tests: the ICONDIR, one directory entry per image
/// and the images' bytes (PNG files or bitmaps from `TinyBMPWriter.bitmap(icon:andMask:)`).
public struct TinyICOWriter {
    public struct Entry {
        /// The directory's width and height bytes (0 means 256; the decoder reads the image's own).
        public var width: UInt8
        public var height: UInt8
        public var bitCount: Int
        public var data: [UInt8]

        public init(width: UInt8, height: UInt8, bitCount: Int = 32, data: [UInt8]) {
            self.width = width
            self.height = height
            self.bitCount = bitCount
            self.data = data
        }
    }

    public var entries: [Entry]
    /// 1 icon, 2 cursor.
    public var type: Int
    /// The count written in the ICONDIR (default: the entries'); a test may lie with it.
    public var declaredCount: Int?

    public init(entries: [Entry], type: Int = 1, declaredCount: Int? = nil) {
        self.entries = entries
        self.type = type
        self.declaredCount = declaredCount
    }

    public func bytes() -> [UInt8] {
        var out: [UInt8] = [0, 0] + le16(type) + le16(declaredCount ?? entries.count)
        var offset = 6 + 16 * entries.count
        for entry in entries {
            out += [entry.width, entry.height, 0, 0] + le16(1) + le16(entry.bitCount) + le32(entry.data.count) + le32(offset)
            offset += entry.data.count
        }
        for entry in entries { out += entry.data }
        return out
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}
