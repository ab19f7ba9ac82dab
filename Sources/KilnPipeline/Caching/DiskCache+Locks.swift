import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// The render locks (`RenderLocking`) and named locks of the disk cache: lock files under
/// `<path>/locks/ab/<hex>.lock`, held with `flock`, waited for with a growing pause, their
/// holder's announced deadline honoured (`RenderLock.announce`).
extension DiskCache {
    public func lock(_ key: CacheKey, timeout: Double) -> LockResult {
        lock(hex: key.hex, timeout: timeout)
    }

    /// The lock named `name` (64 hex digits, e.g. `SourceSideFiles.id` of a source path): the render
    /// locks' mechanism for other exclusive work on the cache folder (one fetch of a source for
    /// every worker). Held, waited for and announced like a render lock.
    public func lock(named name: String, timeout: Double) -> LockResult {
        lock(hex: name, timeout: timeout)
    }

    /// The lock named `hex` (64 hex digits): a cache key's, or a named lock.
    func lock(hex: String, timeout: Double) -> LockResult {
        guard folderUsable() else { return .unavailable }
        let p = lockPath(hex)
        let deadline = Timeline.now() + UInt64(max(0, timeout) * 1e9)
        var waited = false
        var pause = 2
        for _ in 0..<100 {
            var fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            if fd < 0 && Errno.current == ENOENT {
                CacheFiles.makeDirectories(String(p.dropLast(hex.count + 6)))
                fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            }
            guard fd >= 0 else { return lockUnavailable("cannot open \(p): \(Errno.text(Errno.current))") }
            while flock(fd, LOCK_EX | LOCK_NB) != 0 {
                let code = Errno.current
                if code == EINTR { continue }
                guard code == EWOULDBLOCK else {
                    close(fd)
                    return lockUnavailable("cannot lock \(p): \(Errno.text(code))")
                }
                if Timeline.now() >= deadline && !holderWithinDeadline(fd) {
                    close(fd)
                    return .timedOut
                }
                waited = true
                Sleep.milliseconds(pause)
                pause = min(pause * 2, 10)
            }
            if CacheFiles.isSameFile(fd, p) { return .acquired(RenderLock(fd: fd, path: p), waited: waited) }
            // The holder (or the sweep) removed the file while we waited: lock the one there now.
            close(fd)
        }
        return .timedOut
    }

    /// Whether the holder of the lock file open on `fd` announced a deadline that has not passed
    /// (`RenderLock.announce`): its render is slow, not stuck, so waiting stays coalescing. An
    /// announcement more than an hour ahead is not believed (a clock jump, a stray file).
    func holderWithinDeadline(_ fd: Int32) -> Bool {
        guard let until = RenderLock.announcedDeadline(fd) else { return false }
        let t = now()
        return until > t && until - t < 3_600_000
    }

    func lockUnavailable(_ why: String) -> LockResult {
        warnOnce(why, consequence: "rendering without coordination between processes")
        return .unavailable
    }
}

extension DiskCache {
    /// The lock named `name` if nobody holds it now, without waiting (nil when it is held or
    /// cannot be opened): the decode markers (`RenderCoordinator.decoding`).
    public func tryLock(named name: String) -> RenderLock? {
        guard folderUsable() else { return nil }
        let p = lockPath(name)
        for _ in 0..<3 {
            var fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            if fd < 0 && Errno.current == ENOENT {
                CacheFiles.makeDirectories(String(p.dropLast(name.count + 6)))
                fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0o644)
            }
            guard fd >= 0 else { return nil }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                close(fd)
                return nil
            }
            if CacheFiles.isSameFile(fd, p) { return RenderLock(fd: fd, path: p) }
            close(fd)   // removed meanwhile: lock the file there now
        }
        return nil
    }
}
