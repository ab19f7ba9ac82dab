import KilnModel

/// What the codec of a HEIC or AVIF file will really decode, from its boxes and (HEIC) its
/// sequence parameter sets, before any pixel exists (issue 25: size headers that lie).
///
/// - Every coded item (`hvc1` / `av01`: the image, a grid's tiles, the alpha plane, thumbnails)
///   counts by its `ispe`; a HEIC item's SPS (in `hvcC` and in its data) must give the same size
///   after the conformance window (or before it: some writers store the padded size), with at
///   most 64 rows and columns of coding padding, else the file is corrupt. AVIF frames are held
///   to their `ispe` by dav1d's frame size limit, which `AVIFDecoder` sets from
///   `largestCodedPixels`.
/// - A `grid` or `iovl` item's output size (its descriptor) must be its `ispe` (or, as libheif
///   writes a grid with `irot`, its `ispe` transposed).
/// - The cost: libavif 0.11 decodes every tile before it assembles the grid; libheif 1.15 one
///   tile at a time (`DecodePlan` prices both from `codedPixels` and `largestCodedPixels`).
public struct CodedLayout: Equatable, Sendable {
    /// Sum of every coded item's area (what the codec runs through, at most).
    public var codedPixels: Int
    /// The largest coded item.
    public var largestCodedPixels: Int
    /// Whether the primary image is a grid.
    public var isGrid: Bool

    static let cap = 1 << 40

    /// The layout of `data`, nil when its boxes do not parse (the library then refuses the file)
    /// or it has no coded item. Throws `corrupt` when a size in the file lies.
    public static func read(_ data: [UInt8], format: ImageFormat) throws(DecodeError) -> CodedLayout? {
        guard let items = HEIFItems.parse(data) else { return nil }
        let codec = format == .heic ? "hvc1" : "av01"
        var layout = CodedLayout(codedPixels: 0, largestCodedPixels: 0, isGrid: items.items[items.primary]?.type == "grid")
        // Item data read for in-band parameter sets: at most the file's size once more (extents
        // shared by many items would otherwise make this walk cost what the file multiplies).
        var budget = data.count + (1 << 20)
        for (id, item) in items.items.sorted(by: { $0.key < $1.key }) {
            if item.type == "grid" {
                try checkGrid(items, id)
                continue
            }
            if item.type == "iovl" {
                try checkOverlay(items, id)
                continue
            }
            guard item.type == codec else { continue }
            guard let stored = items.storedSize(of: id) else {
                throw .corrupt("\(format.displayName) item \(id) has no size (ispe)")
            }
            // ispe sizes are 32-bit: capped at 2^40 pixels (far over any budget), so sums and the
            // plan's products cannot overflow.
            let product = stored.width.multipliedReportingOverflow(by: stored.height)
            let pixels = product.overflow ? Self.cap : min(product.partialValue, Self.cap)
            if format == .heic { try checkHEVC(items, id, stored: stored, budget: &budget) }
            layout.codedPixels = min(layout.codedPixels + pixels, Self.cap)
            layout.largestCodedPixels = max(layout.largestCodedPixels, pixels)
        }
        return layout.codedPixels > 0 ? layout : nil
    }

    /// A grid's descriptor (version, flags, rows - 1, columns - 1, output size) against its `ispe`.
    private static func checkGrid(_ items: HEIFItems, _ id: UInt32) throws(DecodeError) {
        guard let d = items.itemData(id, limit: 64), d.count >= 8, let stored = items.storedSize(of: id) else {
            throw .corrupt("grid item \(id) has no descriptor or no size (ispe)")
        }
        let wide = d[1] & 1 != 0
        guard !wide || d.count >= 12 else { throw .corrupt("grid item \(id) has a short descriptor") }
        let width = wide ? HEIFItems.u32(d, 4) : Int(d[4]) << 8 | Int(d[5])
        let height = wide ? HEIFItems.u32(d, 8) : Int(d[6]) << 8 | Int(d[7])
        // libheif writes the ispe of a grid it rotates (irot 1 or 3) transposed; the area is the same.
        guard (width, height) == stored || (height, width) == stored else {
            throw .corrupt("grid item \(id) is \(width)x\(height), its ispe says \(stored.width)x\(stored.height)")
        }
        let tiles = (Int(d[2]) + 1) * (Int(d[3]) + 1)
        guard items.items[id]?.derivedFrom.count == tiles else {
            throw .corrupt("grid item \(id) has \(items.items[id]?.derivedFrom.count ?? 0) tiles for \(tiles) cells")
        }
    }

    /// An overlay's descriptor (version, flags, four 16-bit fill values, output size) against its
    /// `ispe`: libheif allocates the descriptor's canvas.
    private static func checkOverlay(_ items: HEIFItems, _ id: UInt32) throws(DecodeError) {
        guard let d = items.itemData(id, limit: 1 << 20), d.count >= 14, let stored = items.storedSize(of: id) else {
            throw .corrupt("overlay item \(id) has no descriptor or no size (ispe)")
        }
        let wide = d[1] & 1 != 0
        guard !wide || d.count >= 18 else { throw .corrupt("overlay item \(id) has a short descriptor") }
        let width = wide ? HEIFItems.u32(d, 10) : Int(d[10]) << 8 | Int(d[11])
        let height = wide ? HEIFItems.u32(d, 14) : Int(d[12]) << 8 | Int(d[13])
        guard (width, height) == stored || (height, width) == stored else {
            throw .corrupt("overlay item \(id) is \(width)x\(height), its ispe says \(stored.width)x\(stored.height)")
        }
    }

    /// Every SPS of an HEVC item (its `hvcC` and its data) against its `ispe`.
    private static func checkHEVC(_ items: HEIFItems, _ id: UInt32, stored: (width: Int, height: Int),
                                  budget: inout Int) throws(DecodeError) {
        guard let config = items.property("hvcC", of: id), config.count >= 23 else {
            throw .corrupt("HEIC item \(id) has no decoder configuration (hvcC)")
        }
        var sizes = HEVCSequenceSize.inConfiguration(items.data[config])
        let lengthSize = Int(items.data[config.lowerBound + 21] & 3) + 1
        if let length = items.dataLength(id) {
            guard length <= budget, let data = items.itemData(id, limit: length) else {
                throw .corrupt("HEIC item \(id): item data overlaps or runs past the file")
            }
            budget -= length
            sizes += HEVCSequenceSize.inItemData(data, lengthSize: lengthSize)
        }
        guard !sizes.isEmpty else { throw .corrupt("HEIC item \(id) has no sequence parameter set") }
        for size in sizes {
            guard let size else { throw .corrupt("HEIC item \(id) has a sequence parameter set that does not parse") }
            // ispe is the shown size; some writers put the coded (padded) size there instead.
            guard (size.cropped.width...size.coded.width).contains(stored.width),
                  (size.cropped.height...size.coded.height).contains(stored.height),
                  size.coded.width - size.cropped.width <= 64, size.coded.height - size.cropped.height <= 64 else {
                throw .corrupt("HEIC item \(id) is coded as \(size.coded.width)x\(size.coded.height) "
                    + "(\(size.cropped.width)x\(size.cropped.height) shown), its ispe says \(stored.width)x\(stored.height)")
            }
        }
    }
}
