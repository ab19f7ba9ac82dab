/// The layout of a disk entry: a header, then the body (the encoded image; empty for failures).
///
/// ```
/// 0  "KLNC"                      magic
/// 4  UInt16 version (3)          6  UInt8 kind (1 image, 2 failure)   7  UInt8 0
/// 8  UInt32 header size          12 UInt16 failure kind (`PipelineFailure.Kind.code`)     14 UInt16 0
/// 16 UInt64 body size
/// 24 Int64 Last-Modified seconds
/// 32 Int64 expiry, wall-clock milliseconds (0: never)
/// 40 five strings, each UInt32 length + UTF-8: key text, format (`ImageFormat` raw value, or
///    `DocumentKind`'s for `f:json`/`f:blurhash`/`f:thumbhash`; empty for an original), digest, source path, message
/// .. UInt64 checksum of the header before it and of the body (`EntryChecksum`)
/// ```
/// All integers little-endian. A reader checks magic, version, that header size + body size is
/// the file size (a truncated file fails here), the key text and the checksum. Version 3 stores
/// the format and digest where version 2 stored a content type and a quoted ETag: entries of other
/// versions are misses, never misread.
enum EntryCodec {
    static let magic: [UInt8] = Array("KLNC".utf8)
    static let version: UInt16 = 3
    static let kindImage: UInt8 = 1
    static let kindFailure: UInt8 = 2
    static let fixedSize = 40
    /// The smallest header: the fixed part, five empty strings and the checksum.
    static let minimumHeaderSize = fixedSize + 5 * 4 + 8
    static let maximumHeaderSize = 1 << 20
    static let maximumMessageBytes = 1024

    struct Header {
        var kind: UInt8
        var failureCode: UInt16
        var headerSize: Int
        var bodySize: Int
        var lastModified: Int64
        var expires: Int64
        var key: String
        var format: String
        var digest: String
        var sourcePath: String
        var message: String
        var checksum: UInt64

        /// The stored failure kind; an unknown code (a newer writer) reads as internal.
        var failureKind: PipelineFailure.Kind { PipelineFailure.Kind(rawValue: failureCode) ?? .internal }
    }

    enum Parsed {
        case header(Header)
        /// The header is longer than the bytes given: read this many.
        case needMore(Int)
        case corrupt(String)
    }

    static func encodeHeader(_ entry: CacheEntry, key: CacheKey, body: [UInt8]) -> [UInt8] {
        var kind = kindImage, failureCode: UInt16 = 0, lastModified: Int64 = 0, expires: Int64 = 0
        var format = "", digest = "", sourcePath = key.sourcePath, message = ""
        switch entry {
        case .image(let image):
            format = image.format?.rawValue ?? image.document?.rawValue ?? ""
            digest = image.digest
            lastModified = image.sourceModified
            sourcePath = image.sourcePath
        case let .failure(failure, e):
            kind = kindFailure
            failureCode = failure.kind.code
            message = String(decoding: failure.message.utf8.prefix(maximumMessageBytes), as: UTF8.self)
            expires = e
        }
        let strings = [key.text, format, digest, sourcePath, message]
        let size = fixedSize + strings.reduce(0) { $0 + 4 + $1.utf8.count } + 8
        var out: [UInt8] = []
        out.reserveCapacity(size)
        out += magic
        append(&out, UInt64(version), bytes: 2)
        out.append(kind)
        out.append(0)
        append(&out, UInt64(size), bytes: 4)
        append(&out, UInt64(failureCode), bytes: 2)
        append(&out, 0, bytes: 2)
        append(&out, UInt64(body.count), bytes: 8)
        append(&out, UInt64(bitPattern: lastModified), bytes: 8)
        append(&out, UInt64(bitPattern: expires), bytes: 8)
        for s in strings {
            append(&out, UInt64(s.utf8.count), bytes: 4)
            out += s.utf8
        }
        var sum = EntryChecksum()
        out.withUnsafeBytes { sum.update($0) }
        body.withUnsafeBytes { sum.update($0) }
        append(&out, sum.value, bytes: 8)
        return out
    }

    /// Parses the header from the first bytes of a file of `fileSize` bytes.
    static func parse(_ bytes: UnsafeRawBufferPointer, fileSize: Int) -> Parsed {
        guard bytes.count >= fixedSize else { return .corrupt("shorter than a header") }
        guard bytes[0] == magic[0], bytes[1] == magic[1], bytes[2] == magic[2], bytes[3] == magic[3] else {
            return .corrupt("bad magic")
        }
        guard UInt16(read(bytes, 4, 2)) == version else { return .corrupt("unknown version \(read(bytes, 4, 2))") }
        let kind = bytes[6]
        guard kind == kindImage || kind == kindFailure else { return .corrupt("unknown kind \(kind)") }
        let headerSize = Int(read(bytes, 8, 4))
        guard headerSize >= minimumHeaderSize, headerSize <= maximumHeaderSize else { return .corrupt("bad header size \(headerSize)") }
        let bodySize = read(bytes, 16, 8)
        guard bodySize <= UInt64(Int.max - headerSize), headerSize + Int(bodySize) == fileSize else {
            return .corrupt("file is \(fileSize) bytes, header says \(headerSize) + \(bodySize) (truncated?)")
        }
        guard bytes.count >= headerSize else { return .needMore(headerSize) }
        var offset = fixedSize
        var strings: [String] = []
        for _ in 0..<5 {
            guard offset + 4 <= headerSize - 8 else { return .corrupt("strings overrun the header") }
            let n = Int(read(bytes, offset, 4))
            offset += 4
            guard n <= headerSize - 8 - offset else { return .corrupt("strings overrun the header") }
            strings.append(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + n)]), as: UTF8.self))
            offset += n
        }
        guard offset == headerSize - 8 else { return .corrupt("header size does not match its strings") }
        return .header(Header(kind: kind, failureCode: UInt16(read(bytes, 12, 2)), headerSize: headerSize, bodySize: Int(bodySize),
                              lastModified: Int64(bitPattern: read(bytes, 24, 8)), expires: Int64(bitPattern: read(bytes, 32, 8)),
                              key: strings[0], format: strings[1], digest: strings[2], sourcePath: strings[3],
                              message: strings[4], checksum: read(bytes, headerSize - 8, 8)))
    }

    private static func append(_ out: inout [UInt8], _ value: UInt64, bytes: Int) {
        for i in 0..<bytes { out.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(i)))) }
    }

    private static func read(_ bytes: UnsafeRawBufferPointer, _ offset: Int, _ count: Int) -> UInt64 {
        var v: UInt64 = 0
        for i in 0..<count { v |= UInt64(bytes[offset + i]) << (8 * UInt64(i)) }
        return v
    }
}
