/// One request to an origin, as the metrics and `Server-Timing` see it: what a source stage with
/// remote sources reports after each request (`SourceActivity`, `RenderObserving.originFetched`).
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
