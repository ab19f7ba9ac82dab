import Glibc

/// Whole-file reads and writes by path.
public enum Files {
    /// Flags for opening a file that must be a regular file before it is read: a FIFO or device
    /// in its place never blocks the `open` (O_NONBLOCK), no symlink at the last step. The caller
    /// `fstat`s the descriptor and refuses anything but a regular file (`clearNonBlocking` after).
    public static let readRegularFlags: Int32 = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC

    /// Whether `path` itself is a symbolic link (`lstat`; false when nothing is there).
    public static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    /// Bytes an unprivileged writer may still write on the file system that holds `path`
    /// (`statvfs`: available blocks × fragment size); nil when it cannot be asked.
    public static func availableBytes(_ path: String) -> Int? {
        var fs = statvfs()
        guard statvfs(path, &fs) == 0 else { return nil }
        return Int(fs.f_bavail) * Int(fs.f_frsize)
    }

    /// Clears O_NONBLOCK on `fd` (harmless for regular files, cleared so reads behave as usual).
    public static func clearNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL)
        if flags >= 0 && flags & O_NONBLOCK != 0 { _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) }
    }

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
    /// old file or the whole new one, never a part. The temporary file is created by `mkstemp`
    /// (O_EXCL, so never through a symlink); a symlink at `path` is replaced, never followed.
    /// The temporary file is removed on failure.
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
