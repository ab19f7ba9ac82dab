import KilnModel

/// Decodes Windows icons and cursors (ICO, CUR) in Swift; PNG entries through `PNGDecoder`.
///
/// - The directory (ICONDIR: reserved 0, type 1 icon or 2 cursor) lists at most 256 entries; more
///   is `.corrupt` before any entry is read. Each entry's bytes must lie inside the file.
/// - An entry is a PNG (its real size and alpha from the PNG's header, not the directory's bytes,
///   where 0 means 256) or a bitmap without file header (`DIBImage` with `icon: true`: the height
///   is doubled and a 1-bit AND mask follows the colour rows).
/// - Pages: `page:<n>` is entry n in directory order; the default image is the largest entry
///   (by pixel area, then bit depth, then the first). Every entry's header is read to choose it,
///   so a broken entry makes the whole file `.corrupt`.
/// - Output: a bitmap entry is always RGBA (its alpha or its mask); a PNG entry as `PNGDecoder`
///   decodes it, with its ICC profile.
public struct ICODecoder: ImageDecoding, PagedDecoding, Sendable {
    /// Entries accepted in a directory.
    public static let maxEntries = 256

    public init() {}

    public func readHeader(_ data: [UInt8]) throws(DecodeError) -> ImageHeader {
        let entries = try Self.entries(data)
        return entries[Self.largest(entries)].header
    }

    public func readHeader(_ data: [UInt8], page: Int) throws(DecodeError) -> ImageHeader {
        let entries = try Self.entries(data)
        guard entries.indices.contains(page) else { throw .corrupt("ICO has no entry \(page) (it has \(entries.count))") }
        return entries[page].header
    }

    public func decode(_ data: [UInt8], options: DecodeOptions) throws(DecodeError) -> DecodedImage {
        let entries = try Self.entries(data)
        let index = options.page ?? Self.largest(entries)
        guard entries.indices.contains(index) else { throw .corrupt("ICO has no entry \(index) (it has \(entries.count))") }
        let entry = entries[index]
        try options.limits.check(entry.header)
        let bytes = Array(data[entry.range])
        if let bitmap = entry.bitmap {
            return DecodedImage(buffer: try bitmap.decode(bytes), header: entry.header)
        }
        var options = options
        options.page = nil
        options.minimumSize = nil   // full size, as `DecodePlan` plans it (icons are small)
        var image = try PNGDecoder().decode(bytes, options: options)
        guard image.buffer.size == entry.header.size else { throw .corrupt("ICO entry \(index) changed size while decoding") }
        image.header = entry.header
        image.header.hasAlpha = image.buffer.hasAlpha
        image.header.orientation = 1
        return image
    }

    /// One directory entry, read as far as its header.
    struct Entry {
        var range: Range<Int>
        var header: ImageHeader
        var bitsPerPixel: Int
        /// nil for a PNG entry.
        var bitmap: DIBImage?
    }

    static func entries(_ data: [UInt8]) throws(DecodeError) -> [Entry] {
        let reader = ByteReader(data: data, format: "ICO")
        guard data.count >= 6 else { throw .corrupt("ICO is truncated") }
        let type = try reader.u16(2)
        guard try reader.u16(0) == 0, type == 1 || type == 2 else { throw .corrupt("not an ICO (bad directory header)") }
        let count = try reader.u16(4)
        guard count > 0 else { throw .corrupt("ICO has no entries") }
        guard count <= maxEntries else { throw .corrupt("ICO has \(count) entries (at most \(maxEntries))") }
        guard 6 + 16 * count <= data.count else { throw .corrupt("ICO is truncated") }
        var entries: [Entry] = []
        for i in 0..<count {
            let base = 6 + 16 * i
            let size = try reader.u32(base + 8), offset = try reader.u32(base + 12)
            guard offset >= 6 + 16 * count, size > 0, size <= data.count - offset else {
                throw .corrupt("ICO entry \(i) is truncated or outside the file")
            }
            let bytes = Array(data[offset..<offset + size])
            var entry: Entry
            if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]) {
                var header = try PNGDecoder().readHeader(bytes)
                header.format = .ico
                header.orientation = 1
                let depth = bytes.count > 25 ? Int(bytes[24]) * [1, 0, 3, 1, 2, 0, 4][min(Int(bytes[25]), 6)] : 0
                entry = Entry(range: offset..<offset + size, header: header, bitsPerPixel: depth, bitmap: nil)
            } else {
                let bitmap = try DIBImage.parse(bytes, at: 0, pixelOffset: nil, icon: true, format: "ICO")
                var header = ImageHeader(format: .ico, width: bitmap.width, height: bitmap.height, hasAlpha: true)
                header.hasColourProfile = false
                entry = Entry(range: offset..<offset + size, header: header, bitsPerPixel: bitmap.bitCount, bitmap: bitmap)
            }
            entry.header.pageCount = count
            entries.append(entry)
        }
        return entries
    }

    /// The default entry: the largest by area, then by bit depth, then the first.
    static func largest(_ entries: [Entry]) -> Int {
        var best = 0
        for (i, entry) in entries.enumerated() {
            let area = entry.header.width * entry.header.height, bestArea = entries[best].header.width * entries[best].header.height
            if area > bestArea || (area == bestArea && entry.bitsPerPixel > entries[best].bitsPerPixel) { best = i }
        }
        return best
    }
}
