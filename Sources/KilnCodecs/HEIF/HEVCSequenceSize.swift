import KilnModel

/// The picture size an HEVC sequence parameter set (SPS, NAL type 33) makes libde265 allocate:
/// `pic_width_in_luma_samples` × `pic_height_in_luma_samples` (the coded size), and the size
/// after the conformance window (what is shown, and what `ispe` must say).
///
/// Reads only as far as the conformance window (ITU-T H.265 7.3.2.2): NAL header, VPS id,
/// sub-layers, profile_tier_level, SPS id, chroma format, then exp-Golomb sizes. Emulation
/// prevention bytes (00 00 03) are removed first.
public struct HEVCSequenceSize: Equatable, Sendable {
    public var coded: PixelSize
    public var cropped: PixelSize

    /// The sizes of `nal` (one SPS NAL unit, with its 2-byte header), nil when it is not an SPS or
    /// does not parse.
    public static func read(_ nal: ArraySlice<UInt8>) -> HEVCSequenceSize? {
        var bits = BitReader(Self.unescaped(nal))
        guard let forbidden = bits.read(1), forbidden == 0, let type = bits.read(6), type == 33,
              bits.skip(9),                           // nuh_layer_id, nuh_temporal_id_plus1
              bits.skip(4),                           // sps_video_parameter_set_id
              let subLayers = bits.read(3), bits.skip(1),
              bits.skip(8 + 32 + 48 + 8)              // general profile, flags, constraints, level
        else { return nil }
        var profilePresent: [Bool] = [], levelPresent: [Bool] = []
        for _ in 0..<subLayers {
            guard let p = bits.read(1), let l = bits.read(1) else { return nil }
            profilePresent.append(p == 1)
            levelPresent.append(l == 1)
        }
        if subLayers > 0 { guard bits.skip(2 * (8 - subLayers)) else { return nil } }
        for i in 0..<subLayers {
            guard bits.skip((profilePresent[i] ? 88 : 0) + (levelPresent[i] ? 8 : 0)) else { return nil }
        }
        guard let spsID = bits.golomb(), spsID <= 15, let chroma = bits.golomb(), chroma <= 3 else { return nil }
        var separatePlanes = false
        if chroma == 3 {
            guard let flag = bits.read(1) else { return nil }
            separatePlanes = flag == 1
        }
        guard let width = bits.golomb(), let height = bits.golomb(), width > 0, height > 0,
              let window = bits.read(1) else { return nil }
        var crop = (left: 0, right: 0, top: 0, bottom: 0)
        if window == 1 {
            guard let l = bits.golomb(), let r = bits.golomb(), let t = bits.golomb(), let b = bits.golomb() else { return nil }
            crop = (l, r, t, b)
        }
        let format = separatePlanes ? 0 : chroma
        let subWidth = format == 1 || format == 2 ? 2 : 1, subHeight = format == 1 ? 2 : 1
        let croppedWidth = width - subWidth * (crop.left + crop.right)
        let croppedHeight = height - subHeight * (crop.top + crop.bottom)
        guard croppedWidth > 0, croppedHeight > 0 else { return nil }
        return HEVCSequenceSize(coded: PixelSize(width: width, height: height),
                                cropped: PixelSize(width: croppedWidth, height: croppedHeight))
    }

    /// HEVC has 16 SPS ids; past this many parameter sets in one place, each is nil (refused)
    /// instead of parsed.
    static let maxSets = 64

    /// Every SPS in an `hvcC` box's payload (its NAL arrays).
    public static func inConfiguration(_ hvcC: ArraySlice<UInt8>) -> [HEVCSequenceSize?] {
        let b = Array(hvcC)
        guard b.count >= 23 else { return [nil] }
        var out: [HEVCSequenceSize?] = []
        var pos = 23
        for _ in 0..<Int(b[22]) {
            guard pos + 3 <= b.count else { return out + [nil] }
            let type = b[pos] & 0x3F
            let count = Int(b[pos + 1]) << 8 | Int(b[pos + 2])
            pos += 3
            for _ in 0..<count {
                guard pos + 2 <= b.count else { return out + [nil] }
                let length = Int(b[pos]) << 8 | Int(b[pos + 1])
                guard pos + 2 + length <= b.count else { return out + [nil] }
                if type == 33 { out.append(out.count < maxSets ? read(b[(pos + 2)..<(pos + 2 + length)]) : nil) }
                pos += 2 + length
            }
        }
        return out
    }

    /// Every SPS among the length-prefixed NAL units of an item's data (an in-band SPS replaces the
    /// `hvcC` one in libde265). `lengthSize`: 1, 2 or 4 (`hvcC` lengthSizeMinusOne + 1).
    public static func inItemData(_ data: [UInt8], lengthSize: Int) -> [HEVCSequenceSize?] {
        var out: [HEVCSequenceSize?] = []
        var pos = 0
        while pos + lengthSize <= data.count {
            var length = 0
            for k in 0..<lengthSize { length = length << 8 | Int(data[pos + k]) }
            pos += lengthSize
            guard length <= data.count - pos else { break }
            if length >= 2, (data[pos] >> 1) & 0x3F == 33 {
                out.append(out.count < maxSets ? read(data[pos..<(pos + length)]) : nil)
            }
            pos += length
        }
        return out
    }

    /// The RBSP: `nal` without its emulation prevention bytes.
    static func unescaped(_ nal: ArraySlice<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(nal.count)
        var zeros = 0
        for byte in nal {
            if zeros >= 2 && byte == 3 { zeros = 0; continue }
            zeros = byte == 0 ? zeros + 1 : 0
            out.append(byte)
        }
        return out
    }
}
