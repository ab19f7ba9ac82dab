/// Writes small uncompressed PNGs (zlib stored blocks) with any bit depth and an optional gAMA
/// chunk, so tests can make inputs that the encoder under test cannot (16-bit, gamma, grey,
/// palette, extra chunks).
enum TinyPNGWriter {
    /// `samples`: per row, the samples of every pixel (colour type 0: grey; 2: RGB; 3: palette
    /// index; 4: grey + alpha; 6: RGBA), 8 or 16 bits. `palette` (RGB triples) becomes PLTE,
    /// `transparency` tRNS; `chunks` are written before IDAT as given.
    static func png(width: Int, height: Int, bitDepth: Int, colorType: UInt8, samples: [Int], gamma: UInt32? = nil,
                    palette: [UInt8]? = nil, transparency: [UInt8]? = nil, chunks: [(String, [UInt8])] = []) -> [UInt8] {
        var raw: [UInt8] = []
        let perPixel = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colorType)] ?? 3
        for y in 0..<height {
            raw.append(0)   // filter: none
            for i in 0..<(width * perPixel) {
                let value = samples[y * width * perPixel + i]
                if bitDepth == 16 { raw.append(UInt8(value >> 8)); raw.append(UInt8(value & 0xFF)) } else { raw.append(UInt8(value)) }
            }
        }
        var out: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        out += chunk("IHDR", be32(UInt32(width)) + be32(UInt32(height)) + [UInt8(bitDepth), colorType, 0, 0, 0])
        if let gamma { out += chunk("gAMA", be32(gamma)) }
        if let palette { out += chunk("PLTE", palette) }
        if let transparency { out += chunk("tRNS", transparency) }
        for (type, data) in chunks { out += chunk(type, data) }
        out += chunk("IDAT", zlibStored(raw))
        out += chunk("IEND", [])
        return out
    }

    static func be32(_ v: UInt32) -> [UInt8] { [UInt8(v >> 24), UInt8((v >> 16) & 0xFF), UInt8((v >> 8) & 0xFF), UInt8(v & 0xFF)] }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return be32(UInt32(data.count)) + typed + be32(crc32(typed))
    }

    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
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

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}
