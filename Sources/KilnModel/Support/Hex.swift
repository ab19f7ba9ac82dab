/// Hexadecimal text of bytes, without Foundation: the one hex encoder of the code base (digests,
/// cache entry names, S3 payload hashes, the key lists of `kiln config dump`, colours) and the
/// digits of `PercentEncoding`'s `%XX`.
public enum Hex {
    /// `0123456789abcdef`, as bytes.
    public static let lowerDigits = Array("0123456789abcdef".utf8)
    /// `0123456789ABCDEF`, as bytes.
    public static let upperDigits = Array("0123456789ABCDEF".utf8)

    /// Two lower-case hex digits per byte, most significant first: `[0x0f, 0xa0]` is `0fa0`.
    public static func lowercase(_ bytes: some Sequence<UInt8>) -> String {
        encode(bytes, digits: lowerDigits)
    }

    /// Two upper-case hex digits per byte: `[0x0f, 0xa0]` is `0FA0`.
    public static func uppercase(_ bytes: some Sequence<UInt8>) -> String {
        encode(bytes, digits: upperDigits)
    }

    /// The 16 digits of each 64-bit word, most significant first (the words in their order):
    /// the same text as `lowercase` of their big-endian bytes.
    public static func lowercase(words: [UInt64]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(words.count * 16)
        for word in words {
            for j in 0..<16 { out.append(lowerDigits[Int((word >> UInt64(60 - 4 * j)) & 0xF)]) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of an even number of hex digits (either case), nil for anything else.
    public static func decode(_ text: String) -> [UInt8]? {
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            case 0x41...0x46: c - 0x41 + 10
            default: nil
            }
        }
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let high = value(chars[i]), let low = value(chars[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    static func encode(_ bytes: some Sequence<UInt8>, digits: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
