import Glibc

/// Reads and writes on file descriptors that finish the job: retried after EINTR and after short
/// reads and writes.
public enum FileDescriptorIO {
    /// Reads from `fd` until end of file (pipes, sockets, files from their current offset).
    public static func readAll(_ fd: Int32, chunk: Int = 64 * 1024) throws(SystemError) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: max(chunk, 1))
        while true {
            let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw SystemError("read", code: code)
            }
            if n == 0 { return out }
            out.append(contentsOf: buffer[0..<n])
        }
    }

    /// Reads until `buffer` is full or the file ends, at `offset` (`pread`) or, when nil, at the
    /// descriptor's own offset (`read`). Returns the count read.
    public static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer,
                                 offset: Int? = nil) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = if let offset {
                pread(fd, base + done, buffer.count - done, off_t(offset + done))
            } else {
                Glibc.read(fd, base + done, buffer.count - done)
            }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw SystemError(offset == nil ? "read" : "pread", code: code)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try writeAll(fd, [bytes])
    }

    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        let result = bytes.withUnsafeBytes { raw -> SystemError? in
            do throws(SystemError) { try writeAll(fd, [raw]) } catch { return error }
            return nil
        }
        if let result { throw result }
    }

    /// Writes all the buffers, in order, to `fd` (one `writev` in the common case).
    public static func writeAll(_ fd: Int32, _ buffers: [UnsafeRawBufferPointer]) throws(SystemError) {
        var iov = buffers.filter { $0.count > 0 }.map {
            iovec(iov_base: UnsafeMutableRawPointer(mutating: $0.baseAddress), iov_len: $0.count)
        }
        var i = 0
        while i < iov.count {
            let n = iov.withUnsafeMutableBufferPointer {
                writev(fd, $0.baseAddress! + i, Int32(min($0.count - i, 1024 /* IOV_MAX */)))
            }
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                throw SystemError("write", code: code)
            }
            var left = n
            while i < iov.count && left >= iov[i].iov_len {
                left -= iov[i].iov_len
                i += 1
            }
            if i < iov.count && left > 0 {
                iov[i].iov_base = iov[i].iov_base! + left
                iov[i].iov_len -= left
            }
        }
    }
}
