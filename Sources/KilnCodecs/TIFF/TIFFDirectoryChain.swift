import KilnModel

/// The chain of a TIFF's image file directories (IFDs), walked in Swift before libtiff opens the
/// file: how many pages there are, bounded and cheap whatever the file claims.
///
/// Classic TIFF (`II*\0` / `MM\0*`, 12-byte entries, 32-bit offsets) and BigTIFF (43, 20-byte
/// entries, 64-bit offsets). The walk stops at an offset of 0, at a loop (a directory seen
/// before) or at a directory past the end of the file, as libtiff stops; more than
/// `TIFFDecoder.maxPages` directories is `.corrupt` (libtiff would walk them all again for each
/// page). A first directory that is not inside the file is `.corrupt` ("TIFF is truncated").
struct TIFFDirectoryChain {
    var bigEndian: Bool
    var bigTIFF: Bool
    /// The directories' offsets, in chain order.
    var offsets: [Int]

    static func walk(_ data: [UInt8], limit: Int) throws(DecodeError) -> TIFFDirectoryChain {
        guard data.count >= 8 else { throw .corrupt("TIFF is truncated") }
        let bigEndian: Bool
        switch (data[0], data[1]) {
        case (0x49, 0x49): bigEndian = false
        case (0x4D, 0x4D): bigEndian = true
        default: throw .corrupt("not a TIFF (no byte order mark)")
        }
        var chain = TIFFDirectoryChain(bigEndian: bigEndian, bigTIFF: false, offsets: [])
        let version = chain.read(data, at: 2, bytes: 2)
        var next: Int?
        switch version {
        case 42: next = chain.read(data, at: 4, bytes: 4)
        case 43:
            chain.bigTIFF = true
            next = chain.read(data, at: 8, bytes: 8)
        default: throw .corrupt("not a TIFF (version \(version.map(String.init) ?? "?"))")
        }
        var seen = Set<Int>()
        let countBytes = chain.bigTIFF ? 8 : 2, entryBytes = chain.bigTIFF ? 20 : 12, offsetBytes = chain.bigTIFF ? 8 : 4
        while let offset = next, offset != 0, !seen.contains(offset) {
            guard let count = chain.read(data, at: offset, bytes: countBytes) else { break }
            let end = count.multipliedReportingOverflow(by: entryBytes)
            guard !end.overflow, end.partialValue <= data.count - offset - countBytes else { break }
            guard chain.offsets.count < limit else { throw .corrupt("TIFF has more than \(limit) directories") }
            seen.insert(offset)
            chain.offsets.append(offset)
            next = chain.read(data, at: offset + countBytes + end.partialValue, bytes: offsetBytes)
        }
        guard !chain.offsets.isEmpty else { throw .corrupt("TIFF is truncated (no complete directory)") }
        return chain
    }

    /// An unsigned integer of `bytes` bytes at `offset` in the file's byte order; nil past the end
    /// (or above Int.max).
    func read(_ data: [UInt8], at offset: Int, bytes: Int) -> Int? {
        guard offset >= 0, offset <= data.count - bytes else { return nil }
        var value: UInt64 = 0
        for i in 0..<bytes {
            let byte = UInt64(data[offset + (bigEndian ? i : bytes - 1 - i)])
            value = value << 8 | byte
        }
        return value > UInt64(Int.max) ? nil : Int(value)
    }
}
