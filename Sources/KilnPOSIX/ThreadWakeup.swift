import Glibc

/// A wait another thread can end early: `wait(timeout:)` sleeps until `wake()` or the time-out
/// (a pipe and `poll`, so it works beside signals and needs no condition variable). The tracing
/// exporter's thread waits on one between exports; a request thread wakes it without blocking
/// (the pipe is non-blocking: a wake-up while one is pending is dropped, which is the same).
public final class ThreadWakeup: @unchecked Sendable {
    private let readFD: Int32
    private let writeFD: Int32

    /// Nil when no pipe could be made (descriptors exhausted).
    public init?() {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { return nil }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        readFD = fds[0]
        writeFD = fds[1]
    }

    deinit {
        close(readFD)
        close(writeFD)
    }

    /// Ends the current or next `wait` (never blocks).
    public func wake() {
        var byte: UInt8 = 1
        _ = write(writeFD, &byte, 1)
    }

    /// Waits up to `timeout` seconds for `wake`; true when woken. Pending wake-ups are consumed.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        var p = pollfd(fd: readFD, events: Int16(POLLIN), revents: 0)
        let ms = Int32(max(0, min(timeout, 86_400)) * 1000)
        let ready = poll(&p, 1, ms) > 0
        if ready {
            var sink = [UInt8](repeating: 0, count: 64)
            while read(readFD, &sink, sink.count) > 0 {}
        }
        return ready
    }
}
