import Glibc

/// A held render lock. `DiskCache`'s is an exclusive `flock` on a key's lock file: the kernel
/// releases it when the process dies, so a killed holder never blocks others; `release()` (or
/// deinit) removes the file and unlocks.
///
/// Lock files are removed while locked, so a waiter may end up holding a lock on a file that is no
/// longer linked: `DiskCache.lock` only returns after checking (after locking) that the path still
/// names the file it locked, and retries otherwise. The holder of a verified lock is therefore the
/// only one allowed to remove the path, which keeps that check valid.
///
/// Stand-ins (`RenderLocking` in tests) make one with `init(onRelease:)`.
public final class RenderLock {
    let fd: Int32
    let path: String
    let onRelease: (() -> Void)?
    public private(set) var isHeld = true

    init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
        self.onRelease = nil
    }

    /// A lock without a file: `onRelease` runs once, on `release()` or deinit.
    public init(onRelease: @escaping () -> Void) {
        self.fd = -1
        self.path = ""
        self.onRelease = onRelease
    }

    /// Tells waiters until when (Unix milliseconds) the holder may render: its deadline. A waiter
    /// keeps waiting while the lock is held and this time has not passed (`DiskCache.lock`).
    public func announce(until unixMilliseconds: Int64) {
        guard isHeld, fd >= 0 else { return }
        let text = Array("\(unixMilliseconds)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// Withdraws the announced deadline (the file is left empty).
    public func withdrawAnnouncement() {
        guard isHeld, fd >= 0 else { return }
        _ = ftruncate(fd, 0)
    }

    /// What the file said when this lock was taken: the deadline of an earlier holder that died
    /// holding it (a holder that released it removed the file), nil when none.
    public var announcedDeadline: Int64? { fd >= 0 ? RenderLock.announcedDeadline(fd) : nil }

    /// The deadline a holder announced in the lock file open on `fd`, nil when none (or garbage).
    static func announcedDeadline(_ fd: Int32) -> Int64? {
        var bytes = [UInt8](repeating: 0, count: 24)
        let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard n > 1 else { return nil }
        let digits = bytes.prefix(n).prefix { $0 >= 0x30 && $0 <= 0x39 }
        guard !digits.isEmpty, digits.count < 19 else { return nil }
        return Int64(String(decoding: digits, as: UTF8.self))
    }

    public func release() {
        guard isHeld else { return }
        isHeld = false
        if let onRelease { onRelease(); return }
        unlink(path)
        close(fd)
    }

    /// What the kernel does when the holder is killed: the lock goes, the file stays.
    func abandon() {
        guard isHeld else { return }
        isHeld = false
        if fd >= 0 { close(fd) }
    }

    deinit { release() }
}
