import KilnModel
import KilnPipeline
import KilnPOSIX

/// What a failed fetch means to the request (`LoadError`), and the failures remembered per path
/// for `source.negative_ttl`, so that a missing or broken remote source is not asked for again on
/// every request; each fetch is recorded for the metrics (`OriginTraffic`).
extension RemoteSource {
    /// What a failed GET means to the request.
    func loadError(_ failure: HTTPFetcher.Failure) -> LoadError {
        let name = origin.name
        switch failure {
        case let .refused(why): return .upstream("origin \(name): \(why) (source.allowed_networks)")
        case let .tooLarge(why): return .tooLarge("origin \(name): source is \(why), over limits.max_file_bytes")
        case let .timeout(why):
            if why.contains("source.min_speed") { return .upstreamTimeout("origin \(name) sent its body too slowly: \(why)") }
            return .upstreamTimeout("origin \(name) did not answer within source.fetch_timeout (or limits.render_timeout): \(why)")
        case let .redirects(why): return .upstream("origin \(name): \(why)")
        case let .unavailable(why): return .io("origin \(name): \(why)")
        case let .transport(why): return .upstream("origin \(name): \(why)")
        case let .interrupted(partial, why, timedOut):
            let what = "origin \(name) sent \(partial.body.count) bytes, then: \(why)"
            guard timedOut else { return .upstream(what) }
            return .upstreamTimeout(why.contains("source.min_speed") ? what : "\(what) (source.fetch_timeout)")
        case let .notStarted(why): return .upstreamTimeout("origin \(name): \(why)")
        case let .busy(why): return .busy("origin \(name): \(why)")
        }
    }

    /// `loadError(failure)`, remembered for `path` during `source.negative_ttl`, except for a
    /// fetch our own limits did not start, and for a body that broke off when `resumable` (kept
    /// for a resume: `SharedOriginSource` remembers it for every worker, with the resume allowed).
    func remembering(_ failure: HTTPFetcher.Failure, for path: String, resumable: Bool = false) -> LoadError {
        let error = loadError(failure)
        switch failure {
        case .notStarted, .busy: return error
        case .interrupted where resumable: return error
        default: return rememberFailure(error, for: path)
        }
    }

    func record(_ outcome: OriginFetch.Outcome, bytes: Int, since started: Double, waited: Double, resumed: Bool = false) {
        traffic?.record(OriginFetch(origin: origin.name, outcome: outcome, bytes: bytes,
                                    seconds: MonotonicClock.seconds() - started, waited: waited, resumed: resumed))
    }

    /// Whether a fresh failure is remembered for `path` (in this process).
    func remembers(_ path: String) -> Bool {
        (try? checkRemembered(path)) == nil
    }

    /// Throws the failure remembered for `path`, if it is still fresh.
    func checkRemembered(_ path: String, now: Double = MonotonicClock.seconds()) throws(LoadError) {
        guard negativeTTL > 0, let failure = failures.withLock({ $0[path] }) else { return }
        if now < failure.until { throw failure.error }
        failures.withLock { $0[path] = nil }
    }

    /// `error`, remembered for `path` during `source.negative_ttl`.
    func rememberFailure(_ error: LoadError, for path: String) -> LoadError {
        guard negativeTTL > 0 else { return error }
        let until = MonotonicClock.seconds() + negativeTTL
        failures.withLock { known in
            if known[path] == nil && known.count >= RemoteSource.maxVersions,
               let oldest = known.min(by: { $0.value.until < $1.value.until })?.key {
                known[oldest] = nil
            }
            known[path] = Failure(error: error, until: until)
        }
        return error
    }
}
