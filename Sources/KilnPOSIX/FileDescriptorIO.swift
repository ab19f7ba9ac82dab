import Glibc
import SystemPackage

/// Reads and writes on file descriptors that finish the job: retried after EINTR and after short
/// reads and writes. Built on swift-system's `FileDescriptor` (interrupt retries, `Errno`); the
/// gathered write (`writev`), which swift-system lacks, is written here.
public enum FileDescriptorIO {
    /// Reads from `fd` until end of file (pipes, sockets, files from their current offset).
    public static func readAll(_ fd: Int32, chunk: Int = 64 * 1024) throws(SystemError) -> [UInt8] {
        let descriptor = FileDescriptor(rawValue: fd)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: max(chunk, 1))
        while true {
            let n: Int
            do {
                n = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0, retryOnInterrupt: true) }
            } catch {
                throw SystemError("read", error)
            }
            if n == 0 { return out }
            out.append(contentsOf: buffer[0..<n])
        }
    }

    /// Reads until `buffer` is full or the file ends, at `offset` (`pread`) or, when nil, at the
    /// descriptor's own offset (`read`). Returns the count read.
    public static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer,
                                 offset: Int? = nil) throws(SystemError) -> Int {
        let descriptor = FileDescriptor(rawValue: fd)
        var done = 0
        while done < buffer.count {
            let rest = UnsafeMutableRawBufferPointer(rebasing: buffer[done...])
            let n: Int
            do {
                n = if let offset {
                    try descriptor.read(fromAbsoluteOffset: Int64(offset + done), into: rest, retryOnInterrupt: true)
                } else {
                    try descriptor.read(into: rest, retryOnInterrupt: true)
                }
            } catch {
                throw SystemError(offset == nil ? "read" : "pread", error)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        do {
            try FileDescriptor(rawValue: fd).writeAll(bytes)
        } catch {
            throw SystemError("write", error)
        }
    }

    /// Writes all of `bytes` to `fd`.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(SystemError) {
        do {
            try FileDescriptor(rawValue: fd).writeAll(bytes)
        } catch {
            throw SystemError("write", error)
        }
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
