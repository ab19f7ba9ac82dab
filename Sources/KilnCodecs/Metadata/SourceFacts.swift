import KilnModel

/// What `f:json` reports beyond the header, read from the container without decoding a pixel:
/// the EXIF payload, the colour profile's description and an animation's total duration.
///
/// JPEG: the marker segments before the first scan (`JPEGMarkers`); PNG: the chunk walk
/// (`PNGChunks`) and libpng's iCCP read; WebP: the demuxer's chunks and frame headers; GIF: the
/// block walk (`GIFStructure`). AVIF, HEIC, TIFF and JPEG XL carry their profile and EXIF in item boxes Kiln does
/// not walk here: their EXIF is not reported, and an embedded profile is named "embedded".
public struct SourceFacts: Sendable, Equatable {
    /// EXIF as TIFF bytes, nil when absent.
    public var exif: [UInt8]?
    /// The ICC profile's description ("Display P3", "Adobe RGB (1998)"); nil without one.
    public var colourProfile: String?
    /// Sum of the frames' durations in milliseconds (0 for a still image).
    public var durationMilliseconds = 0

    public init(exif: [UInt8]? = nil, colourProfile: String? = nil, durationMilliseconds: Int = 0) {
        self.exif = exif
        self.colourProfile = colourProfile
        self.durationMilliseconds = durationMilliseconds
    }

    /// The facts of `data` of `format` with `header` (already read). Never throws: a field that
    /// cannot be read is left out.
    public static func read(_ data: [UInt8], format: ImageFormat, header: ImageHeader) -> SourceFacts {
        var facts = SourceFacts()
        data.withUnsafeBytes { bytes in
            switch format {
            case .jpeg:
                let markers = JPEGMarkers.scan(bytes, collectPayloads: true)
                facts.exif = markers.metadata?.exif
                facts.colourProfile = markers.iccProfile.map(describe)
            case .png:
                guard let chunks = try? PNGChunks.scan(bytes) else { return }
                if let range = chunks.exif, !range.isEmpty, range.upperBound <= bytes.count { facts.exif = Array(bytes[range]) }
                if chunks.hasICCProfile {
                    let profile = try? chunks.withLibpngBytes(bytes) { shown throws(DecodeError) in PNGDecoder.readICC(shown) }
                    facts.colourProfile = (profile ?? nil).map(describe) ?? "embedded"
                }
            case .webp:
                guard let container = WebPContainer(bytes) else { return }
                facts.exif = container.metadata?.exif
                facts.colourProfile = container.iccProfile.map(describe)
                if container.frameCount > 1 { facts.durationMilliseconds = container.totalDurationMilliseconds }
            case .gif:
                if let structure = try? GIFStructure.scan(bytes) { facts.durationMilliseconds = structure.totalDelay * 10 }
            case .avif, .heic, .tiff, .jxl:
                if header.hasColourProfile == true { facts.colourProfile = "embedded" }
            case .svg, .bmp, .ico:
                break
            }
        }
        return facts
    }

    /// The profile's description tag ('desc': ICC v2 text description or v4 'mluc', first
    /// record); "embedded" when it has none that reads.
    public static func describe(_ profile: [UInt8]) -> String {
        ICCDescription.read(profile) ?? "embedded"
    }
}

/// The 'desc' tag of an ICC profile (ICC.1:2010 §9.2.41, v2's textDescriptionType §6.5.17 of
/// ICC.1:2001-04), bounds-checked.
enum ICCDescription {
    static func read(_ p: [UInt8]) -> String? {
        func u32(_ o: Int) -> Int? {
            guard o >= 0, o + 4 <= p.count else { return nil }
            return Int(p[o]) << 24 | Int(p[o + 1]) << 16 | Int(p[o + 2]) << 8 | Int(p[o + 3])
        }
        guard let count = u32(128) else { return nil }
        for i in 0..<min(count, 200) {
            let entry = 132 + 12 * i
            guard let sig = u32(entry), let offset = u32(entry + 4), let size = u32(entry + 8) else { return nil }
            guard sig == 0x6465_7363, size >= 12, offset + size <= p.count, let type = u32(offset) else { continue }
            if type == 0x6465_7363, let n = u32(offset + 8), n > 0, n <= size - 12 {          // 'desc'
                let raw = p[(offset + 12)..<(offset + 12 + n)].prefix { $0 != 0 }
                return clean(String(decoding: raw, as: UTF8.self))
            }
            if type == 0x6D6C_7563, let records = u32(offset + 8), records > 0,               // 'mluc'
               let length = u32(offset + 20), let start = u32(offset + 24),
               start + length <= size, length >= 2 {
                var units: [UInt16] = []
                var o = offset + start
                while o + 1 < offset + start + length {
                    units.append(UInt16(p[o]) << 8 | UInt16(p[o + 1]))
                    o += 2
                }
                return clean(String(decoding: units, as: UTF16.self))
            }
        }
        return nil
    }

    /// Printable text of at most 100 characters; nil when nothing is left.
    static func clean(_ s: String) -> String? {
        let kept = String(s.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.prefix(100).map(Character.init))
        let trimmed = kept.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed()
        return trimmed.isEmpty ? nil : String(trimmed)
    }
}
