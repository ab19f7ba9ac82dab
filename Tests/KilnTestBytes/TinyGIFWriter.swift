/// Writes small GIFs for the decoder tests, every block under the test's control: a global
/// palette of at most 4 colours, per-frame Graphic Control Extensions (disposal, transparent
/// index, delay), offsets, local palettes, interlacing and a NETSCAPE2.0 loop count.
///
/// The LZW data needs no compressor: with a minimum code size of 2 the codes are 3 bits wide,
/// and a clear code before every pair of literals keeps the table (and so the width) from
/// growing (after a clear the first literal adds nothing, the second adds code 6 < 8).
public struct TinyGIFWriter {
    public struct Frame {
        public var left: Int, top: Int, width: Int, height: Int
        /// Palette indices, row by row in display order (interlaced files reorder them).
        public var indices: [UInt8]
        public var disposal: Int?
        public var transparentIndex: UInt8?
        /// Centiseconds.
        public var delay: Int
        public var localPalette: [(UInt8, UInt8, UInt8)]?
        public var interlaced: Bool

        public init(left: Int = 0, top: Int = 0, width: Int, height: Int, indices: [UInt8], disposal: Int? = nil,
                    transparentIndex: UInt8? = nil, delay: Int = 0, localPalette: [(UInt8, UInt8, UInt8)]? = nil,
                    interlaced: Bool = false) {
            self.left = left
            self.top = top
            self.width = width
            self.height = height
            self.indices = indices
            self.disposal = disposal
            self.transparentIndex = transparentIndex
            self.delay = delay
            self.localPalette = localPalette
            self.interlaced = interlaced
        }
    }

    public var width: Int
    public var height: Int
    /// At most 4 colours (the global table always has 4 entries; missing ones are black).
    public var palette: [(UInt8, UInt8, UInt8)]
    /// NETSCAPE2.0 loop count; nil writes no extension.
    public var loopCount: Int?
    public var frames: [Frame]

    public init(width: Int, height: Int, palette: [(UInt8, UInt8, UInt8)], loopCount: Int? = nil, frames: [Frame] = []) {
        self.width = width
        self.height = height
        self.palette = palette
        self.loopCount = loopCount
        self.frames = frames
    }

    /// The file.
    public func bytes() -> [UInt8] {
        var out = Array("GIF89a".utf8)
        out += le16(width) + le16(height) + [0xF1, 0, 0]   // global table of 4 entries
        out += table(palette)
        if let loopCount {
            out += [0x21, 0xFF, 11] + Array("NETSCAPE2.0".utf8) + [3, 1] + le16(loopCount) + [0]
        }
        for frame in frames {
            if frame.disposal != nil || frame.transparentIndex != nil || frame.delay != 0 {
                let packed = UInt8((frame.disposal ?? 0) << 2) | (frame.transparentIndex == nil ? 0 : 1)
                out += [0x21, 0xF9, 4, packed] + le16(frame.delay) + [frame.transparentIndex ?? 0, 0]
            }
            var flags: UInt8 = frame.interlaced ? 0x40 : 0
            if frame.localPalette != nil { flags |= 0x81 }
            out += [0x2C] + le16(frame.left) + le16(frame.top) + le16(frame.width) + le16(frame.height) + [flags]
            if let local = frame.localPalette { out += table(local) }
            var stored = frame.indices
            if frame.interlaced {
                stored = []
                for (start, step) in [(0, 8), (4, 8), (2, 4), (1, 2)] {
                    for y in stride(from: start, to: frame.height, by: step) {
                        stored += frame.indices[y * frame.width..<(y + 1) * frame.width]
                    }
                }
            }
            out += [2] + subBlocks(lzw(stored)) + [0]
        }
        out.append(0x3B)
        return out
    }

    private func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }

    private func table(_ colours: [(UInt8, UInt8, UInt8)]) -> [UInt8] {
        (0..<4).flatMap { i in i < colours.count ? [colours[i].0, colours[i].1, colours[i].2] : [0, 0, 0] }
    }

    private func lzw(_ indices: [UInt8]) -> [UInt8] {
        var codes: [Int] = []
        for (n, index) in indices.enumerated() {
            if n % 2 == 0 { codes.append(4) }
            codes.append(Int(index))
        }
        codes.append(5)
        var out: [UInt8] = []
        var accumulator = 0, bits = 0
        for code in codes {
            accumulator |= code << bits
            bits += 3
            while bits >= 8 {
                out.append(UInt8(accumulator & 0xFF))
                accumulator >>= 8
                bits -= 8
            }
        }
        if bits > 0 { out.append(UInt8(accumulator & 0xFF)) }
        return out
    }

    private func subBlocks(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < data.count {
            let n = min(255, data.count - i)
            out.append(UInt8(n))
            out += data[i..<i + n]
            i += n
        }
        return out
    }
}
