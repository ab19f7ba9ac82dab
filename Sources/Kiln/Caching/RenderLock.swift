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
