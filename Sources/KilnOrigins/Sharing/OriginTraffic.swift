import KilnModel
import KilnPipeline
import KilnPOSIX
import Synchronization

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

    /// Hands the fetches recorded since the last call to `observer` (`RenderObserving.originFetched`:
    /// a worker's metrics).
    public func report(to observer: (any RenderObserving)?) {
        for fetch in drain() { observer?.originFetched(fetch) }
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
