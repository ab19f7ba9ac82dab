import KilnModel

/// Who renders a key: an exclusive lock per cache key across processes, so that one process
/// renders and the others wait and read its entry. `DiskCache` is the default (`flock` on lock
/// files); tests stand in for it to drive the pipeline's cache path deterministically.
public protocol RenderLocking: AnyObject {
    /// An exclusive lock on `key`, waiting up to `timeout` seconds for its holder, and longer while
    /// the holder announced a deadline that has not passed (`RenderLock.announce`).
    func lock(_ key: CacheKey, timeout: Double) -> LockResult
    /// The lock named `name` when nobody holds it now, without waiting; nil when it is held or
    /// cannot be had (a source's decode marker, `RenderCoordinator.decoding`). By default none.
    func tryLock(named name: String) -> RenderLock?
}

extension RenderLocking {
    public func tryLock(named name: String) -> RenderLock? { nil }
}

/// The answer of `RenderLocking.lock`.
public enum LockResult {
    /// Held; `waited` when another process held it first.
    case acquired(RenderLock, waited: Bool)
    /// Another process held it for the whole timeout.
    case timedOut
    /// Locks cannot be taken (folder not writable): go on without.
    case unavailable
}
