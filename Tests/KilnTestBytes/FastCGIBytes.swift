/// FastCGI records as a web server sends them, built byte by byte from the specification (no
/// KilnFastCGI code: a test of the reader must not build its input with the code under test).
///
/// Padding is filled with 0xAB, not zeros: a reader must skip it whatever it holds.
public enum FastCGIBytes {
    /// Record types (FastCGI 1.0, 8).
    public enum RecordType {
        public static let beginRequest: UInt8 = 1
        public static let abortRequest: UInt8 = 2
        public static let endRequest: UInt8 = 3
        public static let params: UInt8 = 4
        public static let stdin: UInt8 = 5
        public static let stdout: UInt8 = 6
        public static let stderr: UInt8 = 7
        public static let data: UInt8 = 8
        public static let getValues: UInt8 = 9
        public static let getValuesResult: UInt8 = 10
        public static let unknownType: UInt8 = 11
    }

    /// Roles of FCGI_BEGIN_REQUEST.
    public enum Role {
        public static let responder = 1
        public static let authorizer = 2
        public static let filter = 3
    }

    /// One record: the 8-byte header (`version`, `type`, request `id`, content length, padding
    /// length), `content`, then `padding` bytes (by default what aligns the record to 8 bytes).
    public static func record(_ type: UInt8, id: Int = 1, _ content: [UInt8], padding: Int? = nil, version: UInt8 = 1) -> [UInt8] {
        precondition(content.count <= 65_535 && (padding ?? 0) <= 255)
        let pad = padding ?? (8 - content.count % 8) % 8
        return [version, type, UInt8(id >> 8 & 0xff), UInt8(id & 0xff), UInt8(content.count >> 8), UInt8(content.count & 0xff), UInt8(pad), 0]
            + content + [UInt8](repeating: 0xAB, count: pad)
    }

    /// FCGI_BEGIN_REQUEST for `role`, with FCGI_KEEP_CONN when `keep`.
    public static func begin(id: Int = 1, role: Int = Role.responder, keep: Bool = false) -> [UInt8] {
        record(RecordType.beginRequest, id: id, [UInt8(role >> 8 & 0xff), UInt8(role & 0xff), keep ? 1 : 0, 0, 0, 0, 0, 0])
    }

    /// A name or value length: one byte below 128, else four with the high bit set.
    public static func length(_ n: Int) -> [UInt8] {
        n < 128 ? [UInt8(n)] : [UInt8(n >> 24 & 0x7f) | 0x80, UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)]
    }

    /// Name-value pairs as FCGI_PARAMS content, in the given order.
    public static func nameValues(_ pairs: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in pairs {
            out += length(name.utf8.count) + length(value.utf8.count) + Array(name.utf8) + Array(value.utf8)
        }
        return out
    }

    /// Name-value pairs sorted by name (a dictionary has no order of its own).
    public static func nameValues(_ params: [String: String]) -> [UInt8] {
        nameValues(params.sorted { $0.key < $1.key })
    }

    /// A whole request: BEGIN_REQUEST, the params cut into records of at most 65535 bytes and
    /// ended by an empty one, `stdin` in one record when there is any, and the empty stdin record.
    public static func request(id: Int = 1, role: Int = Role.responder, keep: Bool = false, params: [(String, String)],
                               stdin: [UInt8] = [], padding: Int? = nil) -> [UInt8] {
        var out = begin(id: id, role: role, keep: keep)
        let encoded = nameValues(params)
        var i = 0
        while i < encoded.count {
            let n = min(65_535, encoded.count - i)
            out += record(RecordType.params, id: id, Array(encoded[i..<i + n]), padding: padding)
            i += n
        }
        out += record(RecordType.params, id: id, [])
        if !stdin.isEmpty { out += record(RecordType.stdin, id: id, stdin, padding: padding) }
        out += record(RecordType.stdin, id: id, [])
        return out
    }

    /// `request` with the params of a dictionary, sorted by name.
    public static func request(id: Int = 1, role: Int = Role.responder, keep: Bool = false, params: [String: String],
                               stdin: [UInt8] = [], padding: Int? = nil) -> [UInt8] {
        request(id: id, role: role, keep: keep, params: params.sorted { $0.key < $1.key }, stdin: stdin, padding: padding)
    }
}
