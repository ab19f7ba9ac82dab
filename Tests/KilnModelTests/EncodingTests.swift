import Testing
@testable import KilnModel

/// The shared encoders of KilnModel/Support (`Hex`, `PercentEncoding`, `Base64`): each replaced
/// a copy of its own somewhere else, so these tests pin the bytes those copies wrote.
@Suite struct EncodingTests {
    /// Every byte once, and UTF-8 of several lengths.
    static let allBytes = (0...255).map { UInt8($0) }
    static let samples = ["", "a", "cat.jpg", "odd dir/na me;1.jpg", "%2e%2e", "été", "日本/写真.png", "a+b=c&d", "~-._!$'()*,:@"]

    @Test func hexIsTwoDigitsPerByte() {
        #expect(Hex.lowercase([]) == "")
        #expect(Hex.lowercase([0x00, 0x0f, 0xa0, 0xff]) == "000fa0ff")
        #expect(Hex.uppercase([0x00, 0x0f, 0xa0, 0xff]) == "000FA0FF")
        let all = Hex.lowercase(Self.allBytes)
        #expect(all.count == 512 && all.hasPrefix("000102") && all.hasSuffix("fdfeff"))
        // The former per-byte table lookups.
        let table = Array("0123456789abcdef".utf8)
        let reference = String(decoding: Self.allBytes.flatMap { [table[Int($0 >> 4)], table[Int($0 & 15)]] }, as: UTF8.self)
        #expect(all == reference)
    }

    @Test func hexOfWordsIsHexOfTheirBigEndianBytes() {
        let words: [UInt64] = [0, 0x0123_4567_89ab_cdef, .max, 0x8000_0000_0000_0001]
        let bytes = words.flatMap { w in (0..<8).map { UInt8(truncatingIfNeeded: w >> UInt64(56 - 8 * $0)) } }
        #expect(Hex.lowercase(words: words) == Hex.lowercase(bytes))
        #expect(Hex.lowercase(words: [0x0123_4567_89ab_cdef]) == "0123456789abcdef")
    }

    @Test func digestsAreLowerCaseHex() {
        // SHA-256("abc"), FIPS 180-2.
        #expect(Digest.sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// The former encoders' rule, spelt out: `keep(b)` as is, else `%XX` upper-case.
    static func reference(_ text: String, keep: (UInt8) -> Bool) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for b in text.utf8 { out += keep(b) ? [b] : [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a)
    }

    @Test func percentEncodingKeepsExactlyItsSet() {
        let sets: [(PercentEncoding.AllowedBytes, (UInt8) -> Bool)] = [
            (.unreserved, { Self.isAlphanumeric($0) || "-._~".utf8.contains($0) }),
            (.unreservedAndSlash, { Self.isAlphanumeric($0) || "-._~/".utf8.contains($0) }),
            (.pathSegment, { Self.isAlphanumeric($0) || "-._~!$&'()*+,;=:@".utf8.contains($0) }),
            (.attrChar, { Self.isAlphanumeric($0) || "!#$&+-.^_`|~".utf8.contains($0) }),
        ]
        for (set, keep) in sets {
            for b in Self.allBytes { #expect(set.contains(b) == keep(b), "byte \(b)") }
            for text in Self.samples { #expect(PercentEncoding.encode(text, keeping: set) == Self.reference(text, keep: keep)) }
        }
    }

    @Test func percentEncodingExamples() {
        #expect(PercentEncoding.encode("a b/é", keeping: .unreserved) == "a%20b%2F%C3%A9")
        #expect(PercentEncoding.encode("a b/é", keeping: .unreservedAndSlash) == "a%20b/%C3%A9")
        #expect(PercentEncoding.encode("na me;1@x", keeping: .pathSegment) == "na%20me;1@x")
        #expect(PercentEncoding.encode("%", keeping: .unreserved) == "%25")
        var custom = PercentEncoding.AllowedBytes(alphanumerics: false, "a")
        custom.insert(0xff)
        #expect(custom.contains(0xff) && custom.contains(UInt8(ascii: "a")) && !custom.contains(UInt8(ascii: "b")))
        #expect(PercentEncoding.AllowedBytes("-._~") == .unreserved)
    }

    /// RFC 4648 §10.
    @Test func base64TestVectors() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.encode(Array(plain.utf8), alphabet: .url, padding: false) == String(encoded.filter { $0 != "=" }))
        }
    }

    @Test func base64URLUsesItsOwnAlphabet() {
        #expect(Base64.encode([0xfb, 0xff, 0xbf]) == "+/+/")
        #expect(Base64.encode([0xfb, 0xff, 0xbf], alphabet: .url, padding: false) == "-_-_")
        #expect(Base64.encode([0xff], alphabet: .url) == "_w==")
        #expect(Base64.encode(Self.allBytes).count == 344)
    }
}
