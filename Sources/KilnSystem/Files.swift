import Glibc

/// Whole-file reads and writes by path.
public enum Files {
    /// The bytes of the file at `path`.
    public static func read(_ path: String) throws(SystemError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SystemError("cannot open \(path)", code: errno) }
        defer { close(fd) }
        do throws(SystemError) {
            return try FileDescriptorIO.readAll(fd)
        } catch {
            throw SystemError("cannot read \(path)", code: error.code)
        }
    }

    /// Creates or truncates the file at `path` and writes `bytes` to it. A reader may see it
    /// half-written: use `writeAtomically` when that matters.
    public static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { throw SystemError("cannot create \(path)", code: errno) }
        defer { close(fd) }
        do throws(SystemError) {
            try FileDescriptorIO.writeAll(fd, bytes)
        } catch {
            throw SystemError("cannot write \(path)", code: error.code)
        }
    }

    /// Writes `bytes` to a new file beside `path`, then renames it over `path`: readers see the
    /// old file or the whole new one, never a part. The temporary file is removed on failure.
    public static func writeAtomically(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws(SystemError) {
        var template = Array("\(path).tmp-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw SystemError("cannot create a file beside \(path)", code: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let temp = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        var failure: SystemError?
        do throws(SystemError) {
            try FileDescriptorIO.writeAll(fd, bytes)
            if fchmod(fd, mode) != 0 { failure = SystemError("cannot chmod \(temp)", code: errno) }
        } catch {
            failure = SystemError("cannot write \(temp)", code: error.code)
        }
        if close(fd) != 0 && failure == nil { failure = SystemError("cannot write \(temp)", code: errno) }
        if failure == nil && rename(temp, path) != 0 {
            failure = SystemError("cannot rename \(temp) to \(path)", code: errno)
        }
        if let failure {
            unlink(temp)
            throw failure
        }
    }
}
