import Glibc

/// A file that the worker processes of one server share for POSIX record locks and a few small
/// records: the master creates it (a memfd) and gives it to every worker on the same descriptor,
/// like the scoreboard. Locks are `fcntl` `F_SETLK` locks on single bytes: they belong to the
/// process, so two workers conflict, and the kernel drops them when a process dies, so a killed
/// worker never leaves a slot taken. Locked bytes may lie past the end of the file; records are
/// read and written with `pread`/`pwrite` at fixed offsets.
///
/// A process holds a lock at most once: locking a byte it already holds succeeds again (POSIX
/// locks do not count), which is fine for single-threaded workers that hold one at a time.
public final class RecordLockFile: @unchecked Sendable {
    public let fd: Int32
    private let owned: Bool

    private init(fd: Int32, owned: Bool) {
        self.fd = fd
        self.owned = owned
    }

    deinit {
        if owned { close(fd) }
    }

    /// Takes ownership of `fd` (the master's memfd, made by its C shim): closed with the value.
    public static func adopt(fd: Int32) -> RecordLockFile {
        RecordLockFile(fd: fd, owned: true)
    }

    /// The shared file the master put on `fd`, nil unless `fd` is open on the memfd called `name`
    /// (a worker started by hand may have anything there, which must not be written to).
    public static func attach(fd: Int32, name: String) -> RecordLockFile? {
        var buffer = [CChar](repeating: 0, count: 256)
        let length = readlink("/proc/self/fd/\(fd)", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        let target = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard target.hasPrefix("/memfd:\(name) ") || target == "/memfd:\(name)" else { return nil }
        return RecordLockFile(fd: fd, owned: false)
    }

    /// A private file (created and unlinked in `$TMPDIR` or /tmp): the same locks within one
    /// process tree that shares nothing else (tests, a worker without a master).
    public static func anonymous() -> RecordLockFile? {
        let dir = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
        var template = Array("\(dir)/kiln-locks-XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { return nil }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
        return RecordLockFile(fd: fd, owned: true)
    }

    /// Takes the lock on the byte at `offset` if no other process holds it.
    public func tryLock(_ offset: Int64) -> Bool {
        control(F_SETLK, type: F_WRLCK, offset: offset)
    }

    /// Takes the lock on the byte at `offset`, waiting for other processes to release it.
    @discardableResult
    public func lock(_ offset: Int64) -> Bool {
        control(F_SETLKW, type: F_WRLCK, offset: offset)
    }

    public func unlock(_ offset: Int64) {
        _ = control(F_SETLK, type: F_UNLCK, offset: offset)
    }

    /// `count` doubles stored at `offset` (zeros where the file has none yet).
    public func readDoubles(at offset: Int64, count: Int) -> [Double] {
        var values = [Double](repeating: 0, count: count)
        let read = values.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        if read != count * MemoryLayout<Double>.size { return [Double](repeating: 0, count: count) }
        return values
    }

    public func writeDoubles(_ values: [Double], at offset: Int64) {
        _ = values.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) }
    }

    private func control(_ command: Int32, type: Int32, offset: Int64) -> Bool {
        var lock = flock()
        lock.l_type = Int16(type)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = off_t(offset)
        lock.l_len = 1
        while fcntl(fd, command, &lock) != 0 {
            if errno != EINTR { return false }
        }
        return true
    }
}
