import Glibc

/// Plain POSIX threads for the few places that need one (no Foundation `Thread`, no Dispatch pool
/// whose threads other code shares): `kiln warm`'s render threads and the disk cache's background
/// sweep.
public enum KilnThread {
    /// Starts `body` on a new joinable thread; nil when no thread could be started.
    public static func spawn(_ body: @escaping @Sendable () -> Void) -> pthread_t? {
        let box = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
        var thread = pthread_t()
        guard pthread_create(&thread, nil, { raw in
            let body = Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue()
            body.run()
            return nil
        }, box) == 0 else {
            Unmanaged<ThreadBody>.fromOpaque(box).release()
            return nil
        }
        return thread
    }

    /// Starts `body` on a new detached thread (nobody joins it); false when none could be started.
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        guard let thread = spawn(body) else { return false }
        pthread_detach(thread)
        return true
    }

    /// Gives the calling thread the lowest CPU priority (nice 19: on Linux, nice is per thread).
    /// Without an explicit I/O priority the I/O schedulers derive the thread's from its nice value.
    public static func lowerPriority() {
        // `who` 0 is the calling task, i.e. this thread (Linux).
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
    }
}

/// What a new thread runs (passed through `pthread_create`'s context pointer).
private final class ThreadBody: @unchecked Sendable {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
