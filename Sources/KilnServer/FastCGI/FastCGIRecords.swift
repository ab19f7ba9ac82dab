import Glibc
import KilnSystem

/// FastCGI STDOUT records (FastCGI 1.0, section 3.3) built in one buffer, so that a whole answer
/// leaves in a single `write` whatever its size.
///
/// Each record is an 8-byte header (version 1, type 6 = FCGI_STDOUT, request id, content length,
/// no padding) and at most 65 535 bytes of content. The end-of-stream record and
/// FCGI_END_REQUEST are left to libfcgi's `FCGX_Finish_r`.
struct FastCGIRecords {
    static let stdoutType: UInt8 = 6
    /// Content per record: the largest multiple of 8 that fits the 16-bit length.
    static let maxContent = 65_528

    let requestID: Int
    private(set) var bytes: [UInt8] = []

    init(requestID: Int) {
        self.requestID = requestID
    }

    mutating func reserve(payload: Int) {
        bytes.reserveCapacity(payload + (payload / FastCGIRecords.maxContent + 2) * 8)
    }

    /// Appends `content` as as many STDOUT records as it needs (none when it is empty: an empty
    /// record would end the stream).
    mutating func appendStdout(_ content: UnsafeBufferPointer<UInt8>) {
        var offset = 0
        while offset < content.count {
            let n = min(FastCGIRecords.maxContent, content.count - offset)
            bytes += [1, FastCGIRecords.stdoutType, UInt8(requestID >> 8 & 0xff), UInt8(requestID & 0xff),
                      UInt8(n >> 8), UInt8(n & 0xff), 0, 0]
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: content[offset..<offset + n]))
            offset += n
        }
    }

    /// Writes everything to `fd`, retrying after signals and short writes. Returns the errno of a
    /// failed write (the peer went away), nil when all bytes were written.
    func write(to fd: Int32) -> Int32? {
        do {
            try FileDescriptorIO.writeAll(fd, bytes)
            return nil
        } catch {
            return error.code
        }
    }
}
