/// FastCGI name-value pairs (FastCGI 1.0, section 3.4), the body of PARAMS, GET_VALUES and
/// GET_VALUES_RESULT: each pair is the name's length, the value's length, the name, the value;
/// a length below 128 takes one byte, any other four (high bit set, 31 bits big-endian).
///
/// Names and values are bytes; they become Strings with invalid UTF-8 replaced by U+FFFD, and a
/// NUL stays a NUL (libfcgi handed them over as C strings, where a NUL ended the value). A value
/// that is not valid UTF-8 is also kept as its bytes (`nonUTF8`), so that two different paths
/// (`%FE` and `%FF`, both U+FFFD as Strings) are never taken for one.
public enum FastCGINameValuePairs {
    /// Decodes every pair of `bytes` (later duplicates win). Throws when a length runs past the
    /// end or there are more than `maxPairs` pairs.
    public static func decode(_ bytes: UnsafeRawBufferPointer, maxPairs: Int) throws(FastCGIProtocolError) -> [String: String] {
        var ignored: [String: [UInt8]] = [:]
        return try decode(bytes, maxPairs: maxPairs, nonUTF8: &ignored)
    }

    /// As `decode`, and the bytes of every value that is not valid UTF-8 in `nonUTF8`, by name.
    public static func decode(_ bytes: UnsafeRawBufferPointer, maxPairs: Int,
                              nonUTF8: inout [String: [UInt8]]) throws(FastCGIProtocolError) -> [String: String] {
        var out: [String: String] = [:]
        out.reserveCapacity(min(64, maxPairs))
        var i = 0
        var pairs = 0
        while i < bytes.count {
            pairs += 1
            guard pairs <= maxPairs else { throw .tooLarge("more than \(maxPairs) params") }
            let nameLength = try length(bytes, &i)
            let valueLength = try length(bytes, &i)
            // Both lengths are below 2^31, so the sums cannot overflow.
            guard nameLength <= bytes.count - i, valueLength <= bytes.count - i - nameLength else {
                throw .malformed("name-value pair: its lengths run past the end of the record")
            }
            let name = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<i + nameLength]), as: UTF8.self)
            i += nameLength
            let raw = UnsafeRawBufferPointer(rebasing: bytes[i..<i + valueLength])
            i += valueLength
            if let value = String(validating: raw, as: UTF8.self) {
                out[name] = value
                nonUTF8[name] = nil
            } else {
                out[name] = String(decoding: raw, as: UTF8.self)
                nonUTF8[name] = Array(raw)
            }
        }
        return out
    }

    /// The names of a pair list, in order (FCGI_GET_VALUES: the values are empty).
    public static func names(_ bytes: UnsafeRawBufferPointer, maxPairs: Int) throws(FastCGIProtocolError) -> [String] {
        var out: [String] = []
        var i = 0
        while i < bytes.count {
            guard out.count < maxPairs else { throw .tooLarge("more than \(maxPairs) names") }
            let nameLength = try length(bytes, &i)
            let valueLength = try length(bytes, &i)
            guard nameLength <= bytes.count - i, valueLength <= bytes.count - i - nameLength else {
                throw .malformed("name-value pair: its lengths run past the end of the record")
            }
            out.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[i..<i + nameLength]), as: UTF8.self))
            i += nameLength + valueLength
        }
        return out
    }

    /// One length at `i` (1 or 4 bytes), advancing `i`.
    public static func length(_ bytes: UnsafeRawBufferPointer, _ i: inout Int) throws(FastCGIProtocolError) -> Int {
        guard i < bytes.count else { throw .malformed("name-value pair: a length is missing") }
        let first = bytes[i]
        if first < 0x80 {
            i += 1
            return Int(first)
        }
        guard bytes.count - i >= 4 else { throw .malformed("name-value pair: a 4-byte length is cut short") }
        let n = Int(first & 0x7f) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
        i += 4
        return n
    }

    /// Encodes pairs (for FCGI_GET_VALUES_RESULT and tests).
    public static func encode(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in pairs {
            out += encodeLength(name.utf8.count) + encodeLength(value.utf8.count)
            out += Array(name.utf8) + Array(value.utf8)
        }
        return out
    }

    public static func encodeLength(_ n: Int) -> [UInt8] {
        n < 0x80 ? [UInt8(n)]
            : [UInt8(n >> 24 & 0x7f) | 0x80, UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
    }
}
