import KilnModel
@testable import KilnCodecs
import Testing

/// The SPS reader against parameter sets written bit by bit here (ITU-T H.265 7.3.2.2).
@Suite struct HEVCSequenceSizeTests {
    /// MSB-first bits with ue(v).
    struct BitWriter {
        var bits: [Bool] = []
        mutating func put(_ value: Int, _ count: Int) {
            for i in stride(from: count - 1, through: 0, by: -1) { bits.append(value >> i & 1 == 1) }
        }
        mutating func golomb(_ value: Int) {
            let v = value + 1
            let length = Int.bitWidth - v.leadingZeroBitCount
            put(0, length - 1)
            put(v, length)
        }
        var bytes: [UInt8] {
            var padded = bits + [true]   // rbsp_stop_one_bit
            while padded.count % 8 != 0 { padded.append(false) }
            return stride(from: 0, to: padded.count, by: 8).map { i in
                padded[i..<i + 8].reduce(UInt8(0)) { $0 << 1 | ($1 ? 1 : 0) }
            }
        }
    }

    /// An SPS NAL of `width` × `height` with `crop` (left, right, top, bottom) in chroma units,
    /// `subLayers` sub-layers (each with profile and level present) and `chroma` format.
    static func sps(width: Int, height: Int, crop: (Int, Int, Int, Int)? = nil, subLayers: Int = 0, chroma: Int = 1) -> [UInt8] {
        var w = BitWriter()
        w.put(0, 1); w.put(33, 6); w.put(0, 6); w.put(1, 3)        // NAL header
        w.put(0, 4); w.put(subLayers, 3); w.put(1, 1)              // VPS id, sub-layers, nesting
        w.put(1, 8); w.put(0x6000_0000, 32); w.put(0, 48); w.put(90, 8)   // general PTL
        for _ in 0..<subLayers { w.put(1, 1); w.put(1, 1) }
        if subLayers > 0 { w.put(0, 2 * (8 - subLayers)) }
        for _ in 0..<subLayers { w.put(0, 88); w.put(90, 8) }
        w.golomb(0); w.golomb(chroma)
        if chroma == 3 { w.put(0, 1) }
        w.golomb(width); w.golomb(height)
        if let crop {
            w.put(1, 1); w.golomb(crop.0); w.golomb(crop.1); w.golomb(crop.2); w.golomb(crop.3)
        } else {
            w.put(0, 1)
        }
        w.golomb(8)   // bit depth luma - 8 and more: not read
        return w.bytes
    }

    /// Emulation prevention as an encoder adds it: 03 after two zeros before a byte <= 3.
    static func escaped(_ rbsp: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [], zeros = 0
        for b in rbsp {
            if zeros >= 2 && b <= 3 { out.append(3); zeros = 0 }
            out.append(b)
            zeros = b == 0 ? zeros + 1 : 0
        }
        return out
    }

    @Test func readsCodedAndCroppedSizes() throws {
        let plain = try #require(HEVCSequenceSize.read(Self.escaped(Self.sps(width: 12_000, height: 12_000))[...]))
        #expect(plain.coded == PixelSize(width: 12_000, height: 12_000) && plain.cropped == plain.coded)
        // x265's padding of 100x75 to 104x80: crop right 2, bottom 2 (4:2:0 chroma units).
        let padded = try #require(HEVCSequenceSize.read(Self.escaped(Self.sps(width: 104, height: 80, crop: (0, 2, 0, 3)))[...]))
        #expect(padded.coded == PixelSize(width: 104, height: 80) && padded.cropped == PixelSize(width: 100, height: 74))
        let full444 = try #require(HEVCSequenceSize.read(Self.escaped(Self.sps(width: 64, height: 48, crop: (1, 1, 1, 1), chroma: 3))[...]))
        #expect(full444.cropped == PixelSize(width: 62, height: 46))
        let layered = try #require(HEVCSequenceSize.read(Self.escaped(Self.sps(width: 640, height: 480, subLayers: 2))[...]))
        #expect(layered.coded == PixelSize(width: 640, height: 480))
    }

    @Test func refusesWhatIsNotAnSPSOrEndsEarly() {
        var pps = Self.sps(width: 64, height: 64)
        pps[0] = 34 << 1
        #expect(HEVCSequenceSize.read(pps[...]) == nil)
        let whole = Self.escaped(Self.sps(width: 64, height: 64))
        #expect(HEVCSequenceSize.read(whole.prefix(14)) == nil)
        #expect(HEVCSequenceSize.read([][...]) == nil)
        // A window that crops everything away.
        #expect(HEVCSequenceSize.read(Self.escaped(Self.sps(width: 16, height: 16, crop: (4, 4, 0, 0)))[...]) == nil)
    }

    @Test func emulationPreventionIsRemoved() {
        #expect(HEVCSequenceSize.unescaped([0, 0, 3, 1, 0, 0, 3, 0, 0, 3][...]) == [0, 0, 1, 0, 0, 0, 0])
        #expect(HEVCSequenceSize.unescaped([0, 3, 0, 0, 2][...]) == [0, 3, 0, 0, 2])
    }

    @Test func findsEveryParameterSetInAConfigurationAndInItemData() {
        let big = Self.escaped(Self.sps(width: 4096, height: 4096)), small = Self.escaped(Self.sps(width: 64, height: 64))
        var hvcC = [UInt8](repeating: 0, count: 22) + [2]
        hvcC[21] = 0xFF   // lengthSizeMinusOne 3
        hvcC += [0x20, 0, 1, 0, 24] + [UInt8](repeating: 0x40, count: 24)   // a VPS array (not read)
        hvcC += [0xA1, 0, 1, UInt8(small.count >> 8), UInt8(small.count & 255)] + small
        #expect(HEVCSequenceSize.inConfiguration(hvcC[...]).map { $0?.coded.width } == [64])
        var data: [UInt8] = []
        for nal in [[0x26, 1, 0xAF, 0xFF] as [UInt8], big] {   // a slice, then an in-band SPS
            data += [0, 0, UInt8(nal.count >> 8), UInt8(nal.count & 255)] + nal
        }
        #expect(HEVCSequenceSize.inItemData(data, lengthSize: 4).map { $0?.coded.width } == [4096])
    }
}
