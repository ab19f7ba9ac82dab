/// Percent-encoding (RFC 3986 §2.1) without Foundation: the one encoder of the code base. Each
/// caller keeps its own set of bytes written as they are (`AllowedBytes`); every other byte of
/// the UTF-8 is written `%XX` with upper-case digits.
public enum PercentEncoding {
    /// A set of bytes that stay as they are (a 256-bit table).
    public struct AllowedBytes: Sendable, Equatable {
        var bits: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

        /// The bytes of `ascii` (ASCII characters) and, with `alphanumerics`, `A-Z a-z 0-9`.
        public init(alphanumerics: Bool = true, _ ascii: String = "") {
            if alphanumerics {
                for b in UInt8(ascii: "A")...UInt8(ascii: "Z") { insert(b) }
                for b in UInt8(ascii: "a")...UInt8(ascii: "z") { insert(b) }
                for b in UInt8(ascii: "0")...UInt8(ascii: "9") { insert(b) }
            }
            for b in ascii.utf8 { insert(b) }
        }

        /// RFC 3986 unreserved characters: letters, digits, `-._~`.
        public static let unreserved = AllowedBytes("-._~")
        /// `unreserved` and `/`: an S3 object key in a path (SigV4's canonical URI).
        public static let unreservedAndSlash = AllowedBytes("-._~/")
        /// RFC 3986 `pchar`: unreserved, sub-delimiters, `:` and `@` (one path segment).
        public static let pathSegment = AllowedBytes("-._~!$&'()*+,;=:@")
        /// RFC 8187 `attr-char`: letters, digits and `!#$&+-.^_`|~` (a `filename*` value).
        public static let attrChar = AllowedBytes("!#$&+-.^_`|~")

        public mutating func insert(_ byte: UInt8) {
            let bit = UInt64(1) << UInt64(byte & 63)
            switch byte >> 6 {
            case 0: bits.0 |= bit
            case 1: bits.1 |= bit
            case 2: bits.2 |= bit
            default: bits.3 |= bit
            }
        }

        public func contains(_ byte: UInt8) -> Bool {
            let word: UInt64
            switch byte >> 6 {
            case 0: word = bits.0
            case 1: word = bits.1
            case 2: word = bits.2
            default: word = bits.3
            }
            return word >> UInt64(byte & 63) & 1 == 1
        }

        public static func == (a: AllowedBytes, b: AllowedBytes) -> Bool {
            a.bits.0 == b.bits.0 && a.bits.1 == b.bits.1 && a.bits.2 == b.bits.2 && a.bits.3 == b.bits.3
        }
    }

    /// The UTF-8 of `text` with the bytes in `allowed` as they are and every other byte as `%XX`
    /// (upper-case hex): `encode("a b/é", keeping: .unreserved)` is `a%20b%2F%C3%A9`.
    public static func encode(_ text: some StringProtocol, keeping allowed: AllowedBytes) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            if allowed.contains(b) {
                out.append(b)
            } else {
                out += [UInt8(ascii: "%"), Hex.upperDigits[Int(b >> 4)], Hex.upperDigits[Int(b & 0x0f)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
