import KilnModel
@testable import KilnCodecs
import Testing

/// `HEIFItems` and `CodedLayout` against HEIF files written box by box here: one coded item or a
/// grid of them, whose `ispe`, SPS or grid descriptor may lie.
@Suite struct CodedLayoutTests {
    static func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
        let size = 8 + payload.count
        return [UInt8(size >> 24 & 255), UInt8(size >> 16 & 255), UInt8(size >> 8 & 255), UInt8(size & 255)]
            + Array(type.utf8) + payload
    }

    static func full(_ type: String, version: UInt8 = 0, flags: UInt8 = 0, _ payload: [UInt8]) -> [UInt8] {
        box(type, [version, 0, 0, flags] + payload)
    }

    static func u16(_ v: Int) -> [UInt8] { [UInt8(v >> 8 & 255), UInt8(v & 255)] }
    static func u32(_ v: Int) -> [UInt8] { u16(v >> 16) + u16(v & 0xFFFF) }

    struct Item {
        var id: Int
        var type: String
        var ispe: (Int, Int)
        /// The SPS size in its hvcC (HEVC items only).
        var coded: (Int, Int)?
        /// The SPS conformance window (left, right, top, bottom, in 4:2:0 chroma units).
        var crop: (Int, Int, Int, Int)? = nil
        var data: [UInt8] = []
    }

    /// ftyp, meta (pitm, iinf, iref dimg, iprp with one ispe (and hvcC) per item, iloc, idat) and
    /// no mdat: every item's data is in idat.
    static func file(_ items: [Item], primary: Int, dimg: [Int] = []) -> [UInt8] {
        var properties: [[UInt8]] = []
        var associations: [UInt8] = []
        for item in items {
            var indices: [UInt8] = []
            properties.append(full("ispe", u32(item.ispe.0) + u32(item.ispe.1)))
            indices.append(UInt8(properties.count))
            if let coded = item.coded {
                let sps = HEVCSequenceSizeTests.escaped(HEVCSequenceSizeTests.sps(width: coded.0, height: coded.1, crop: item.crop))
                var hvcC = [UInt8](repeating: 0, count: 22) + [1]
                hvcC[21] = 0xFF
                hvcC += [0xA1] + u16(1) + u16(sps.count) + sps
                properties.append(box("hvcC", hvcC))
                indices.append(UInt8(properties.count))
            }
            associations += u16(item.id) + [UInt8(indices.count)] + indices
        }
        let ipma = full("ipma", u32(items.count) + associations)
        let infes = items.flatMap { full("infe", version: 2, u16($0.id) + u16(0) + Array($0.type.utf8) + [0]) }
        let idat = items.flatMap(\.data)
        var meta = full("hdlr", u32(0) + Array("pict".utf8) + [UInt8](repeating: 0, count: 13))
        meta += full("pitm", u16(primary))
        meta += full("iinf", u16(items.count) + infes)
        if !dimg.isEmpty { meta += full("iref", box("dimg", u16(primary) + u16(dimg.count) + dimg.flatMap { u16($0) })) }
        meta += box("iprp", box("ipco", properties.flatMap { $0 }) + ipma)
        // Offsets and lengths of 4 bytes, no base offset, no index; every item in idat.
        meta += full("iloc", version: 1, [0x44, 0x00] + u16(items.count) + Self.entries(items))
        meta += box("idat", idat)
        return box("ftyp", Array("heic".utf8) + u32(0) + Array("mif1heic".utf8)) + full("meta", meta)
    }

    /// iloc version 1 entries: item id, construction method 1 (idat), data reference 0, one extent.
    static func entries(_ items: [Item]) -> [UInt8] {
        var out: [UInt8] = [], offset = 0
        for item in items {
            out += u16(item.id) + u16(1) + u16(0) + u16(1) + u32(offset) + u32(item.data.count)
            offset += item.data.count
        }
        return out
    }

    static func grid(rows: Int, columns: Int, width: Int, height: Int) -> [UInt8] {
        [0, 0, UInt8(rows - 1), UInt8(columns - 1)] + u16(width) + u16(height)
    }

    @Test func anHonestImageIsItsIspe() throws {
        let data = Self.file([Item(id: 1, type: "hvc1", ispe: (100, 75), coded: (100, 75))], primary: 1)
        let items = try #require(HEIFItems.parse(data))
        #expect(items.primary == 1 && items.items[1]?.type == "hvc1")
        #expect(items.storedSize(of: 1)! == (100, 75))
        let layout = try #require(try CodedLayout.read(data, format: .heic))
        #expect(layout == CodedLayout(codedPixels: 7500, largestCodedPixels: 7500, isGrid: false))
    }

    @Test func aCodedSizeOtherThanIspeIsCorrupt() {
        let data = Self.file([Item(id: 1, type: "hvc1", ispe: (100, 100), coded: (12_000, 12_000))], primary: 1)
        #expect(throws: DecodeError.self) { try CodedLayout.read(data, format: .heic) }
        // A thumbnail item lies too: every coded item is checked, not only the primary.
        let thumb = Self.file([Item(id: 1, type: "hvc1", ispe: (64, 64), coded: (64, 64)),
                               Item(id: 2, type: "hvc1", ispe: (8, 8), coded: (8000, 8000))], primary: 1)
        #expect(throws: DecodeError.self) { try CodedLayout.read(thumb, format: .heic) }
    }

    @Test func codingPaddingIsAllowedEitherWay() throws {
        func file(ispe: (Int, Int), coded: (Int, Int) = (104, 80), crop: (Int, Int, Int, Int) = (0, 2, 0, 3)) -> [UInt8] {
            Self.file([Item(id: 1, type: "hvc1", ispe: ispe, coded: coded, crop: crop)], primary: 1)
        }
        // 104x80 coded, 100x74 shown: ispe may say either.
        #expect(try CodedLayout.read(file(ispe: (100, 74)), format: .heic) != nil)
        #expect(try CodedLayout.read(file(ispe: (104, 80)), format: .heic) != nil)
        #expect(throws: DecodeError.self) { try CodedLayout.read(file(ispe: (100, 100)), format: .heic) }
        // A conformance window that hides more than 64 columns of coded picture.
        #expect(throws: DecodeError.self) { try CodedLayout.read(file(ispe: (100, 80), coded: (300, 80), crop: (0, 100, 0, 0)), format: .heic) }
    }

    @Test func aGridIsPricedByItsTiles() throws {
        let tiles = (2...7).map { Item(id: $0, type: "hvc1", ispe: (256, 256), coded: (256, 256)) }
        let grid = Item(id: 1, type: "grid", ispe: (512, 512), data: Self.grid(rows: 2, columns: 3, width: 512, height: 512))
        let data = Self.file([grid] + tiles, primary: 1, dimg: Array(2...7))
        let layout = try #require(try CodedLayout.read(data, format: .heic))
        // Six 256x256 tiles for a 512x512 output: 1.5 times its pixels are decoded.
        #expect(layout == CodedLayout(codedPixels: 6 * 65_536, largestCodedPixels: 65_536, isGrid: true))
        let plan = DecodePlan.plan(format: .heic, data: data,
                                   header: ImageHeader(format: .heic, width: 512, height: 512, frameCount: 1, orientation: 1, hasAlpha: false),
                                   minimum: nil)
        #expect(plan.codedPixels == 6 * 65_536)
    }

    @Test func aGridWhoseDescriptorLiesIsCorrupt() {
        let tiles = (2...3).map { Item(id: $0, type: "av01", ispe: (256, 256)) }
        let bigger = Item(id: 1, type: "grid", ispe: (512, 256), data: Self.grid(rows: 1, columns: 2, width: 12_000, height: 256))
        #expect(throws: DecodeError.self) { try CodedLayout.read(Self.file([bigger] + tiles, primary: 1, dimg: [2, 3]), format: .avif) }
        let fewer = Item(id: 1, type: "grid", ispe: (512, 256), data: Self.grid(rows: 2, columns: 2, width: 512, height: 256))
        #expect(throws: DecodeError.self) { try CodedLayout.read(Self.file([fewer] + tiles, primary: 1, dimg: [2, 3]), format: .avif) }
        let honest = Item(id: 1, type: "grid", ispe: (512, 256), data: Self.grid(rows: 1, columns: 2, width: 512, height: 256))
        #expect((try? CodedLayout.read(Self.file([honest] + tiles, primary: 1, dimg: [2, 3]), format: .avif))?.codedPixels == 131_072)
    }

    @Test func anOverlayWhoseCanvasLiesIsCorrupt() throws {
        let tile = Item(id: 2, type: "hvc1", ispe: (64, 64), coded: (64, 64))
        func overlay(_ w: Int, _ h: Int) -> Item {
            Item(id: 1, type: "iovl", ispe: (128, 64), data: [0, 0] + [UInt8](repeating: 0, count: 8) + Self.u16(w) + Self.u16(h) + Self.u16(0) + Self.u16(0))
        }
        #expect(throws: DecodeError.self) { try CodedLayout.read(Self.file([overlay(30_000, 30_000), tile], primary: 1, dimg: [2]), format: .heic) }
        #expect(try CodedLayout.read(Self.file([overlay(128, 64), tile], primary: 1, dimg: [2]), format: .heic)?.codedPixels == 4096)
    }

    @Test func hugeSizesAreCappedNotTrapped() throws {
        let items = (1...3).map { Item(id: $0, type: "av01", ispe: (0xFFFF_FFFF, 0xFFFF_FFFF)) }
        let layout = try #require(try CodedLayout.read(Self.file(items, primary: 1), format: .avif))
        #expect(layout.codedPixels == CodedLayout.cap && layout.largestCodedPixels == CodedLayout.cap)
        let plan = DecodePlan.plan(format: .avif, data: Self.file(items, primary: 1),
                                   header: ImageHeader(format: .avif, width: 100, height: 100, frameCount: 1, orientation: 1, hasAlpha: false),
                                   minimum: nil)
        #expect(plan.codedPixels == CodedLayout.cap)
    }

    @Test func whatDoesNotParseIsLeftToTheLibrary() throws {
        #expect(HEIFItems.parse([]) == nil)
        let data = Self.file([Item(id: 1, type: "hvc1", ispe: (100, 75), coded: (100, 75))], primary: 1)
        for cut in stride(from: 0, to: data.count, by: 7) {
            _ = try? CodedLayout.read(Array(data.prefix(cut)), format: .heic)   // never traps
        }
    }
}
