import KilnModel
import KilnPipeline
import KilnPOSIX

/// The limits one origin's fetches share across all the workers (Nuke's rate limiter, across
/// processes), so that a burst of cache misses cannot flood an origin: at most
/// `source.origin_concurrency` fetches at a time, and at most `source.origin_rate` fetches a
/// second with bursts of `source.origin_burst` (a token bucket). Across all origins, at most
/// `source.fetch_workers_max` worker processes are in fetches at once, so a slow origin cannot
/// hold every worker while local sources wait: a fetch that finds no worker slot gives up almost
/// at once (`workerWait`), freeing its worker for the next request.
///
/// The state lives in the master's `RecordLockFile` (fd 5 of every worker): fetch slots are
/// record locks on single bytes, which the kernel releases when a worker dies, and the bucket is
/// two doubles (tokens, when last filled, on the system-wide monotonic clock) read and written
/// under a lock of their own. A fetch that finds no token or no free slot polls until its
/// deadline (the fetch time-out, within the render deadline); past it the fetch fails with a 504.
public struct OriginGate: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Fetches at a time across workers; 0: no limit.
        public var concurrency: Int
        /// Fetches per second across workers; 0: no limit.
        public var rate: Double
        /// Fetches the bucket holds when it is full.
        public var burst: Int
        /// Worker processes in origin fetches at a time (all origins together); 0: no limit.
        public var fetchWorkers: Int

        public init(concurrency: Int, rate: Double, burst: Int, fetchWorkers: Int = 0) {
            self.concurrency = concurrency
            self.rate = rate
            self.burst = max(1, burst)
            self.fetchWorkers = fetchWorkers
        }

        public var isUnlimited: Bool { concurrency == 0 && rate == 0 && fetchWorkers == 0 }
    }

    /// A fetch's right to run; `release()` it when the fetch is over.
    public struct Permit {
        let file: RecordLockFile?
        let slot: Int64?
        /// Seconds spent waiting for a token and a slot.
        public let waited: Double

        public func release() {
            if let file, let slot { file.unlock(slot) }
        }
    }

    let file: RecordLockFile
    /// The origin's place in `source.origins`: which record and which lock bytes are its own.
    let index: Int
    public let limits: Limits

    public init(file: RecordLockFile, index: Int, limits: Limits) {
        self.file = file
        self.index = index
        self.limits = limits
    }

    /// Slots and the bucket's lock are bytes far past the records (locks need no data there).
    private var stateLock: Int64 { (1 << 40) + Int64(index) }
    private func slot(_ j: Int) -> Int64 { (1 << 41) + (Int64(index) << 16) + Int64(j) }
    private var record: Int64 { Int64(index) * 16 }
    /// Worker slots are shared by every origin's gate.
    private func workerSlot(_ j: Int) -> Int64 { (1 << 42) + Int64(j) }

    /// Seconds a fetch waits for a worker slot (`Limits.fetchWorkers`) before giving up: a worker
    /// waiting longer would be held by the origins all the same.
    public static let workerWait = 0.25

    /// A worker slot (`Limits.fetchWorkers`), polled for at most `workerWait` and never past
    /// `deadline`; nil when every slot stays taken. A permit without a slot when there is no limit.
    public func enterWorker(until deadline: Double) -> Permit? {
        let start = MonotonicClock.seconds()
        guard limits.fetchWorkers > 0 else { return Permit(file: nil, slot: nil, waited: 0) }
        let giveUp = min(deadline, start + OriginGate.workerWait)
        while true {
            if let taken = (0..<limits.fetchWorkers).lazy.map({ self.workerSlot($0) }).first(where: { self.file.tryLock($0) }) {
                return Permit(file: file, slot: taken, waited: MonotonicClock.seconds() - start)
            }
            if MonotonicClock.seconds() >= giveUp { return nil }
            Sleep.milliseconds(5)
        }
    }

    /// Waits for a token and a free slot until `deadline` (monotonic seconds); nil when the
    /// deadline comes first.
    public func enter(until deadline: Double) -> Permit? {
        let start = MonotonicClock.seconds()
        var haveToken = limits.rate <= 0
        while true {
            let now = MonotonicClock.seconds()
            if !haveToken {
                let wait = takeToken(now: now)
                if wait > 0 {
                    if now + wait > deadline { return nil }
                    Sleep.seconds(min(wait, 0.05))
                    continue
                }
                haveToken = true
            }
            if limits.concurrency <= 0 { return Permit(file: nil, slot: nil, waited: now - start) }
            if let taken = (0..<limits.concurrency).lazy.map({ self.slot($0) }).first(where: { self.file.tryLock($0) }) {
                return Permit(file: file, slot: taken, waited: MonotonicClock.seconds() - start)
            }
            if now >= deadline { return nil }
            Sleep.milliseconds(2)
        }
    }

    /// Takes a token: 0 when one was there, else the seconds until the next one.
    func takeToken(now: Double) -> Double {
        file.lock(stateLock)
        defer { file.unlock(stateLock) }
        let burst = Double(limits.burst)
        let stored = file.readDoubles(at: record, count: 2)
        var tokens = stored[1] == 0 ? burst : stored[0]
        if stored[1] != 0 { tokens = min(burst, tokens + max(0, now - stored[1]) * limits.rate) }
        let wait: Double
        if tokens >= 1 {
            tokens -= 1
            wait = 0
        } else {
            wait = (1 - tokens) / limits.rate
        }
        file.writeDoubles([tokens, now], at: record)
        return wait
    }
}
