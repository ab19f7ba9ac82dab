import KilnModel
import KilnPipeline
import KilnPOSIX
import Synchronization

/// One request to an origin, as the metrics and `Server-Timing` see it.
public struct OriginFetch: Sendable, Equatable {
    public enum Outcome: String, Sendable, CaseIterable {
        /// A 200 (or a 206 that completed a resumed download).
        case ok
        /// A 304 to a revalidation.
        case notModified = "not_modified"
        /// A 404 or 410.
        case notFound = "not_found"
        /// Another status, a refused or broken connection, a redirect loop, a short body.
        case error
        case timeout
        /// The body is over `limits.max_file_bytes`.
        case tooLarge = "too_large"
        /// No slot or token within the deadline (`source.origin_concurrency`, `source.origin_rate`).
        case limited
    }

    public var origin: String
    public var outcome: Outcome
    /// Body bytes received.
    public var bytes: Int
    /// From asking for a slot to the end of the transfer.
    public var seconds: Double
    /// Seconds of that spent waiting for the origin's limits.
    public var waited: Double
    /// A download that continued an interrupted one (`Range`).
    public var resumed: Bool

    public init(origin: String, outcome: Outcome, bytes: Int, seconds: Double, waited: Double = 0, resumed: Bool = false) {
        self.origin = origin
        self.outcome = outcome
        self.bytes = bytes
        self.seconds = seconds
        self.waited = waited
        self.resumed = resumed
    }
}

/// Told of each origin request after the request that made it (a worker's metrics): a pipeline
/// observer that also conforms to this gets them (`OriginTraffic.report(to:)`).
public protocol OriginFetchObserving: AnyObject {
    func originFetched(_ fetch: OriginFetch)
}

/// The origin requests a process made since the pipeline last looked: the remote sources record
/// each one, and the pipeline hands them to its observer (metrics) after each request and names
/// the time they took `fetch` in the request's timeline.
public final class OriginTraffic: SourceActivity {
    private let state = Mutex<State>(State())

    private struct State {
        var pending: [OriginFetch] = []
        var count = 0
        var requestStart: Double?
    }

    public init() {}

    /// The pipeline took a request now (monotonic seconds): fetches for it end before its render
    /// deadline (`limits.render_timeout`, counted from here).
    public func beginRequest(at now: Double) {
        state.withLock { $0.requestStart = now }
    }

    /// When the current request began, nil before the first.
    public var requestStart: Double? { state.withLock { $0.requestStart } }

    public func record(_ fetch: OriginFetch) {
        state.withLock {
            if $0.pending.count < 1024 { $0.pending.append(fetch) }
            $0.count += 1
        }
    }

    /// How many fetches were recorded so far (compare two readings to see whether a stage fetched).
    public var count: Int { state.withLock { $0.count } }

    /// Hands the fetches recorded since the last call to `observer` when it watches origin
    /// fetches (`OriginFetchObserving`: a worker's metrics).
    public func report(to observer: (any RenderObserving)?) {
        let fetches = drain()
        guard let watcher = observer as? any OriginFetchObserving else { return }
        for fetch in fetches { watcher.originFetched(fetch) }
    }

    public func beginRequest() {
        beginRequest(at: MonotonicClock.seconds())
    }

    /// The fetches recorded since the last call.
    public func drain() -> [OriginFetch] {
        state.withLock { state in
            defer { state.pending.removeAll(keepingCapacity: true) }
            return state.pending
        }
    }
}
