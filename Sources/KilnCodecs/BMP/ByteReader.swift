import KilnModel

/// Little-endian reads from bytes that throw "is truncated" instead of trapping.
struct ByteReader {
    var data: [UInt8]
    var format: String

    func u16(_ offset: Int) throws(DecodeError) -> Int {
        guard offset >= 0, offset + 2 <= data.count else { throw .corrupt("\(format) is truncated") }
        return Int(data[offset]) | Int(data[offset + 1]) << 8
    }

    func u32(_ offset: Int) throws(DecodeError) -> Int {
        guard offset >= 0, offset + 4 <= data.count else { throw .corrupt("\(format) is truncated") }
        return Int(data[offset]) | Int(data[offset + 1]) << 8 | Int(data[offset + 2]) << 16 | Int(data[offset + 3]) << 24
    }
}
