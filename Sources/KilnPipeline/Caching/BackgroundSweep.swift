import Glibc
import KilnPOSIX
import Synchronization

/// Runs disk cache sweeps on a thread of their own, at the lowest CPU priority (nice 19, which on
/// Linux is per thread; the I/O scheduler derives the thread's I/O priority from it), so that a
/// sweep of a large cache (a million entries: seconds of `readdir`/`fstatat`) never holds up a
/// request: the worker goes on accepting while it runs. At most one sweep runs per instance, and
/// one per cache folder across processes (`sweep.lock`).
///
/// A sweep goes on in rounds of `maxBatch` evictions while it stays over the limit. What finished
/// is handed to the caller's thread (`takeFinished`) for metrics.
public final class BackgroundSweep: Sendable {
    private struct State {
        var running = false
        var finished: SweepStats?
    }
    private let state = Mutex(State())

    public init() {}

    /// Whether a sweep is running.
    public var isRunning: Bool { state.withLock { $0.running } }

    /// Starts sweeping `sweeper` on a new thread unless a sweep is running; false when one is, or
    /// when no thread could be started.
    @discardableResult
    public func start(_ sweeper: DiskCacheSweeper, maxBatch: Int, nowMs: Int64, maxRounds: Int = 100) -> Bool {
        let claimed = state.withLock { s -> Bool in
            guard !s.running else { return false }
            s.running = true
            return true
        }
        guard claimed else { return false }
        let started = KilnThread.start { [self] in
            KilnThread.lowerPriority()
            var merged: SweepStats?
            for _ in 0..<max(1, maxRounds) {
                guard let s = sweeper.sweep(maxBatch: maxBatch, nowMs: nowMs) else { break }
                merged = merged.map { BackgroundSweep.merge($0, s) } ?? s
                if !s.overLimit || s.removedEntries == 0 { break }
            }
            state.withLock { st in
                if let merged { st.finished = st.finished.map { BackgroundSweep.merge($0, merged) } ?? merged }
                st.running = false
            }
        }
        if !started { state.withLock { $0.running = false } }
        return started
    }

    /// What the sweeps that finished since the last call did (removals added up, sizes of the
    /// last), nil when none finished.
    public func takeFinished() -> SweepStats? {
        state.withLock { s in
            defer { s.finished = nil }
            return s.finished
        }
    }

    /// Waits until no sweep runs, at most `timeout` seconds; true when none runs.
    @discardableResult
    public func wait(timeout: Double) -> Bool {
        let deadline = MonotonicClock.seconds() + timeout
        while isRunning {
            guard MonotonicClock.seconds() < deadline else { return false }
            Sleep.milliseconds(5)
        }
        return true
    }

    /// `b` after `a`: removals add up; what is left, and the time, are `b`'s (time added).
    static func merge(_ a: SweepStats, _ b: SweepStats) -> SweepStats {
        var m = b
        m.removedEntries += a.removedEntries
        m.removedBytes += a.removedBytes
        m.removedLocks += a.removedLocks
        m.removedTemps += a.removedTemps
        m.milliseconds += a.milliseconds
        return m
    }
}
