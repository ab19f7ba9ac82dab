import Foundation
import KilnModel
import KilnPipeline

/// The double of `RenderLocking`: an in-process stand-in for the disk cache's `flock`s that writes
/// `lock` and `release` into its `RecordingDisk`'s log and answers as the test says:
///
/// - `.acquire`: the lock is taken; when `whileWaiting` is set it runs first, as if another
///   process held the lock and did its work (or failed to) before this one got it, and the
///   answer says `waited: true`. `whileWaiting` is used once.
/// - `.timeOut`: another process held it for the whole timeout (`whileWaiting` runs first too).
/// - `.unavailable`: locks cannot be taken.
///
/// Records the timeouts it was asked to wait. Thread-safe.
public final class StandInLock: RenderLocking, @unchecked Sendable {
    public enum Answer: Sendable {
        case acquire, timeOut, unavailable
    }

    public let disk: RecordingDisk
    private let lock = NSLock()
    private var nextAnswer: Answer
    private var hook: ((CacheKey) -> Void)?
    private var askedTimeouts: [Double] = []

    public init(disk: RecordingDisk, answer: Answer = .acquire) {
        self.disk = disk
        self.nextAnswer = answer
    }

    /// How every `lock` call answers.
    public var answer: Answer {
        get { lock.withLock { nextAnswer } }
        set { lock.withLock { nextAnswer = newValue } }
    }

    /// Runs in the next `lock` call, as another process's work while this one waited.
    public var whileWaiting: ((CacheKey) -> Void)? {
        get { lock.withLock { hook } }
        set { lock.withLock { hook = newValue } }
    }

    /// The timeouts of the `lock` calls, in order.
    public var timeouts: [Double] { lock.withLock { askedTimeouts } }

    public func lock(_ key: CacheKey, timeout: Double) -> LockResult {
        disk.record("lock")
        let (answer, otherProcess) = lock.withLock {
            askedTimeouts.append(timeout)
            defer { hook = nil }
            return (nextAnswer, hook)
        }
        switch answer {
        case .unavailable:
            return .unavailable
        case .timeOut:
            otherProcess?(key)
            return .timedOut
        case .acquire:
            otherProcess?(key)
            return .acquired(RenderLock { [disk] in disk.record("release") }, waited: otherProcess != nil)
        }
    }
}
