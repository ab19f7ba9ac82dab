/// Writes small uncompressed little-endian TIFFs for the decoder tests: several pages, each with
/// its own size, samples (grey, RGB, RGBA with associated or unassociated alpha), Orientation
/// tag, ICC profile, and strips or one tile whose geometry a test may make absurd.
public struct TinyTIFFWriter {
    public struct Page {
        public var width: Int
        public var height: Int
        /// 1 grey, 3 RGB, 4 RGBA.
        public var samples: Int
        /// 8-bit samples, top row first, `samples` per pixel.
        public var pixels: [UInt8]
        /// ExtraSamples for the fourth sample: 1 associated alpha, 2 unassociated.
        public var extraSample: Int
        public var orientation: Int?
        public var icc: [UInt8]?
        /// Declared size, when the test lies about it (the data stays `pixels`).
        public var declaredWidth: Int?
        public var declaredHeight: Int?
        /// One tile of this size instead of one strip.
        public var tile: (width: Int, height: Int)?

        public init(width: Int, height: Int, samples: Int, pixels: [UInt8], extraSample: Int = 2, orientation: Int? = nil,
                    icc: [UInt8]? = nil, declaredWidth: Int? = nil, declaredHeight: Int? = nil, tile: (width: Int, height: Int)? = nil) {
            self.width = width
            self.height = height
            self.samples = samples
            self.pixels = pixels
            self.extraSample = extraSample
            self.orientation = orientation
            self.icc = icc
            self.declaredWidth = declaredWidth
            self.declaredHeight = declaredHeight
            self.tile = tile
        }
    }

    public var pages: [Page]

    public init(pages: [Page]) { self.pages = pages }

    /// The file: header, then for each page its pixel data, out-of-line values and directory.
    public func bytes() -> [UInt8] {
        var out: [UInt8] = [0x49, 0x49, 42, 0] + le32(0)
        var previousNext = 4   // where the previous directory's "next" offset goes
        for page in pages {
            let dataOffset = out.count
            out += page.pixels
            if out.count % 2 == 1 { out.append(0) }
            let bitsOffset = out.count
            out += (0..<page.samples).flatMap { _ in le16(8) }
            var iccOffset = 0
            if let icc = page.icc {
                iccOffset = out.count
                out += icc
                if out.count % 2 == 1 { out.append(0) }
            }
            // (tag, type, count, value or offset); type 3 SHORT, 4 LONG, 7 UNDEFINED.
            var entries: [(Int, Int, Int, Int)] = [
                (256, 4, 1, page.declaredWidth ?? page.width),
                (257, 4, 1, page.declaredHeight ?? page.height),
                (258, 3, page.samples, page.samples <= 2 ? 8 | (page.samples == 2 ? 8 << 16 : 0) : bitsOffset),
                (259, 3, 1, 1),
                (262, 3, 1, page.samples >= 3 ? 2 : 1),
                (277, 3, 1, page.samples),
                (284, 3, 1, 1),
            ]
            if let tile = page.tile {
                entries += [(322, 4, 1, tile.width), (323, 4, 1, tile.height), (324, 4, 1, dataOffset), (325, 4, 1, page.pixels.count)]
            } else {
                entries += [(273, 4, 1, dataOffset), (278, 4, 1, page.declaredHeight ?? page.height), (279, 4, 1, page.pixels.count)]
            }
            if let orientation = page.orientation { entries.append((274, 3, 1, orientation)) }
            if page.samples == 4 || page.samples == 2 { entries.append((338, 3, 1, page.extraSample)) }
            if let icc = page.icc { entries.append((34675, 7, icc.count, iccOffset)) }
            entries.sort { $0.0 < $1.0 }
            let ifd = out.count
            out.replaceSubrange(previousNext..<previousNext + 4, with: le32(ifd))
            out += le16(entries.count)
            for (tag, type, count, value) in entries {
                out += le16(tag) + le16(type) + le32(count)
                out += type == 3 && count == 1 ? le16(value) + [0, 0] : le32(value)
            }
            previousNext = out.count
            out += le32(0)
        }
        return out
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    private func le32(_ v: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
}
