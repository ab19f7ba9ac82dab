/// Writes small uncompressed PNGs (zlib stored blocks) with any bit depth and an optional gAMA
/// chunk, so tests can make inputs that the encoder under test cannot (16-bit, 1/2/4-bit, gamma,
/// grey, palette, extra chunks), or frame image data they filtered themselves.
public enum TinyPNGWriter {
    /// The 8 bytes every PNG starts with.
    public static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// `samples`: per row, the samples of every pixel (colour type 0: grey; 2: RGB; 3: palette
    /// index; 4: grey + alpha; 6: RGBA), each row unfiltered (filter type 0). 16-bit samples are
    /// written big-endian; 1, 2 and 4-bit samples are packed, most significant bits first, each row
    /// starting on a byte. `palette` (RGB triples) becomes PLTE, `transparency` tRNS; `chunks` are
    /// written before IDAT as given.
    public static func png(width: Int, height: Int, bitDepth: Int, colorType: UInt8, samples: [Int], gamma: UInt32? = nil,
                           palette: [UInt8]? = nil, transparency: [UInt8]? = nil, chunks: [(String, [UInt8])] = []) -> [UInt8] {
        var raw: [UInt8] = []
        let perPixel = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)] ?? 3
        for y in 0..<height {
            raw.append(0)   // filter: none
            let row = samples[(y * width * perPixel)..<((y + 1) * width * perPixel)]
            switch bitDepth {
            case 16:
                for value in row { raw += [UInt8(value >> 8), UInt8(value & 0xFF)] }
            case 1, 2, 4:
                var byte = 0, used = 0
                for value in row {
                    byte = byte << bitDepth | (value & ((1 << bitDepth) - 1))
                    used += bitDepth
                    if used == 8 { raw.append(UInt8(byte)); byte = 0; used = 0 }
                }
                if used > 0 { raw.append(UInt8(byte << (8 - used))) }
            default:
                for value in row { raw.append(UInt8(value)) }
            }
        }
        var extra: [(String, [UInt8])] = []
        if let gamma { extra.append(("gAMA", be32(gamma))) }
        if let palette { extra.append(("PLTE", palette)) }
        if let transparency { extra.append(("tRNS", transparency)) }
        return png(width: width, height: height, bitDepth: bitDepth, colorType: colorType,
                   chunks: extra + chunks, idat: zlibStored(raw))
    }

    /// A PNG around image data the caller made: signature, IHDR, `chunks`, one IDAT holding
    /// `idat` (a zlib stream, or anything at all: `[]` gives a file as far as a header reader
    /// looks), IEND. `interlaced` sets IHDR's interlace method to Adam7.
    public static func png(width: Int, height: Int, bitDepth: Int = 8, colorType: UInt8, interlaced: Bool = false,
                           chunks: [(String, [UInt8])] = [], idat: [UInt8]) -> [UInt8] {
        var out = signature
        out += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [UInt8(bitDepth), colorType, 0, 0, interlaced ? 1 : 0])
        for (type, data) in chunks { out += chunk(type, data) }
        out += chunk("IDAT", idat)
        out += chunk("IEND", [])
        return out
    }

    public static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    /// One chunk: length, type, data, CRC-32 of type and data.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) blocks holding `data`, with its Adler-32.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let n = min(65_535, data.count - offset)
            let final: UInt8 = offset + n == data.count ? 1 : 0
            out += [final, UInt8(n & 0xFF), UInt8(n >> 8), UInt8(~n & 0xFF), UInt8((~n >> 8) & 0xFF)]
            out += data[offset..<offset + n]
            offset += n
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + be32(b << 16 | a)
    }

    /// CRC-32 as PNG chunks use it (ISO 3309, reflected, polynomial 0xEDB88320).
    public static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
