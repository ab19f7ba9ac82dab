/// Base64 (RFC 4648) without Foundation: the one encoder of the code base. Standard base64 (§4,
/// with `=` padding) for the ThumbHash text answer and the LQIP data URL of `f:json`; base64url
/// without padding (§5) for URL signatures; decoding for the `data:` images an SVG embeds.
public enum Base64 {
    /// The 64 characters of an encoding.
    public enum Alphabet: Sendable {
        /// `A-Z a-z 0-9 + /` (RFC 4648 §4).
        case standard
        /// `A-Z a-z 0-9 - _` (RFC 4648 §5, "base64url").
        case url

        var characters: [UInt8] { self == .standard ? Base64.alphabet : Base64.urlAlphabet }
    }

    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// `bytes` in `alphabet`, the last group padded with `=` to 4 characters when `padding`.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet = .standard, padding: Bool = true) -> String {
        let table = alphabet.characters
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let v = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2])
            out += [table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63], table[v & 63]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = Int(bytes[i]) << 16
            out += [table[v >> 18 & 63], table[v >> 12 & 63]]
            if padding { out += [UInt8(ascii: "="), UInt8(ascii: "=")] }
        } else if rest == 2 {
            let v = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8
            out += [table[v >> 18 & 63], table[v >> 12 & 63], table[v >> 6 & 63]]
            if padding { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The bytes of standard base64 `text` (whitespace skipped, padding optional); nil when a
    /// character is outside the alphabet or the length cannot be base64.
    public static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3)
        var accumulator = 0, bits = 0, padding = 0
        for c in text {
            let v: Int
            switch c {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): v = Int(c) - 65
            case UInt8(ascii: "a")...UInt8(ascii: "z"): v = Int(c) - 71
            case UInt8(ascii: "0")...UInt8(ascii: "9"): v = Int(c) + 4
            case UInt8(ascii: "+"): v = 62
            case UInt8(ascii: "/"): v = 63
            case UInt8(ascii: "="): padding += 1; continue
            case 0x20, 0x09, 0x0A, 0x0D: continue
            default: return nil
            }
            guard padding == 0 else { return nil }   // data after the padding
            accumulator = (accumulator << 6 | v) & 0xFFFFFF
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(accumulator >> bits & 0xFF))
            }
        }
        return bits >= 6 || padding > 2 ? nil : out
    }
}
