/// Standard base64 (RFC 4648 §4, with `=` padding), without Foundation: the ThumbHash text
/// answer and the LQIP data URL of `f:json`.
public enum Base64 {
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    public static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= bytes.count {
            let v = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2])
            out += [alphabet[v >> 18 & 63], alphabet[v >> 12 & 63], alphabet[v >> 6 & 63], alphabet[v & 63]]
            i += 3
        }
        let rest = bytes.count - i
        if rest == 1 {
            let v = Int(bytes[i]) << 16
            out += [alphabet[v >> 18 & 63], alphabet[v >> 12 & 63], UInt8(ascii: "="), UInt8(ascii: "=")]
        } else if rest == 2 {
            let v = Int(bytes[i]) << 16 | Int(bytes[i + 1]) << 8
            out += [alphabet[v >> 18 & 63], alphabet[v >> 12 & 63], alphabet[v >> 6 & 63], UInt8(ascii: "=")]
        }
        return String(decoding: out, as: UTF8.self)
    }
}
