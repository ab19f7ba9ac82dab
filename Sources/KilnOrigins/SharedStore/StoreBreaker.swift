import Logging

/// The shared result store's circuit breaker, one per process: after a failure (an error, a
/// time-out, a refusal) the store is not asked again for `retryAfter` seconds, so a dead or slow
/// store costs one time-out per interval and worker, not one per request. Past the interval the
/// store is probed by a lookup (bounded by `cache.shared_timeout`), never by a write (bounded by
/// the longer `cache.shared_write_timeout`): writes wait until a call succeeded again (`trusted`).
/// It also keeps the warnings to one per interval and kind, so a dead store does not fill the logs.
///
/// Not thread-safe: a worker process serves one request at a time.
final class StoreBreaker {
    let retryAfter: Double
    /// Monotonic seconds.
    let now: () -> Double
    let logger: Logger
    /// Until when the store is skipped (monotonic seconds).
    private(set) var openUntil: Double = -.infinity
    /// Whether the last call to the store succeeded (writes wait for it after a failure).
    private(set) var trusted = true
    /// When each kind of warning was last logged.
    private var warned: [String: Double] = [:]

    init(retryAfter: Double, logger: Logger, now: @escaping () -> Double) {
        self.retryAfter = retryAfter
        self.logger = logger
        self.now = now
    }

    /// Whether the store may be asked now.
    var isClosed: Bool { now() >= openUntil }

    /// Whether a write may be tried now: the interval is over and a lookup succeeded since.
    var writable: Bool { trusted && isClosed }

    /// The store answered.
    func succeeded() {
        trusted = true
    }

    /// The store failed: skip it for `retryAfter` seconds, and say so once per interval.
    func failed(_ what: String, _ reason: String) {
        openUntil = now() + retryAfter
        trusted = false
        warn("unavailable", "shared result store (cache.shared): \(what) failed: \(reason); caching locally only for \(formatted(retryAfter)) s")
    }

    /// Logs `message` unless a warning of the same `kind` was logged within `retryAfter` seconds.
    func warn(_ kind: String, _ message: String) {
        let t = now()
        if let last = warned[kind], t - last < max(retryAfter, 1) { return }
        warned[kind] = t
        logger.warning("\(message)")
    }

    private func formatted(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? "\(Int(seconds))" : "\(seconds)"
    }
}
