import Logging

/// The shared result store's circuit breaker, one per process: after a failure (an error, a
/// time-out, a refusal) the store is not asked again for `retryAfter` seconds, so a dead or slow
/// store costs one time-out per interval and worker, not one per request. It also keeps the
/// warnings to one per interval and kind, so a dead store does not fill the logs.
///
/// Not thread-safe: a worker process serves one request at a time.
final class StoreBreaker {
    let retryAfter: Double
    /// Monotonic seconds.
    let now: () -> Double
    let logger: Logger
    /// Until when the store is skipped (monotonic seconds).
    private(set) var openUntil: Double = -.infinity
    /// When each kind of warning was last logged.
    private var warned: [String: Double] = [:]

    init(retryAfter: Double, logger: Logger, now: @escaping () -> Double) {
        self.retryAfter = retryAfter
        self.logger = logger
        self.now = now
    }

    /// Whether the store may be asked now.
    var isClosed: Bool { now() >= openUntil }

    /// The store failed: skip it for `retryAfter` seconds, and say so once per interval.
    func failed(_ what: String, _ reason: String) {
        openUntil = now() + retryAfter
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
