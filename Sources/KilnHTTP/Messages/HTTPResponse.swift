import KilnPipeline
import KilnModel

/// A response ready to be written: status, headers in order, body.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Header fields in the order they are written (`Content-Type` first by convention).
    public var headers: [(String, String)]
    public var body: [UInt8]
    /// For the access line only, never sent (`AccessLog`): the phases that ran, and the reason of
    /// an error answer (for a 5xx the library detail the client does not get).
    public var timeline: Timeline?
    public var reason: String?
    /// Where an image answer came from (the `X-Cache` header says the same): for metrics and the
    /// access line, typed.
    public var cacheOutcome: CacheOutcome?
    /// Never sent: what the request's trace span says of the answer (the variant, the sizes;
    /// `TraceFacts`).
    public var traceFacts = TraceFacts()

    public init(status: Int, headers: [(String, String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    public static func == (a: HTTPResponse, b: HTTPResponse) -> Bool {
        a.status == b.status && a.body == b.body
            && a.headers.map { "\($0.0): \($0.1)" } == b.headers.map { "\($0.0): \($0.1)" }
    }

    public func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    /// The CGI-style head a FastCGI responder writes before the body:
    /// `Status: 200 OK\r\nContent-Type: ...\r\n\r\n`.
    public var cgiHead: String {
        var s = "Status: \(status) \(HTTPResponse.reason(status))\r\n"
        for (k, v) in headers { s += "\(k): \(v)\r\n" }
        return s + "\r\n"
    }

    /// The standard reason phrase of `status` (swift-http-types' table).
    public static func reason(_ status: Int) -> String {
        StatusPhrases.phrase(status)
    }
}

/// Turns one request into one response. Workers call it once per FastCGI request, synchronously.
public protocol RequestHandling {
    func handle(_ request: HTTPRequest) -> HTTPResponse
    /// Housekeeping after the answer went out (the client is not kept waiting), e.g. a cache sweep;
    /// the stages it ran for the request (writes to the shared store), for its trace.
    @discardableResult
    func afterResponse() -> [Timeline.Interval]
    /// From now on, tell `observer` where each request is (a worker's `RequestMonitor`).
    func observe(with observer: any RenderObserving)
    /// Before the process exits: lets background housekeeping (a sweep) finish, boundedly.
    func finish()
}

extension RequestHandling {
    @discardableResult
    public func afterResponse() -> [Timeline.Interval] { [] }
    public func finish() {}
    public func observe(with observer: any RenderObserving) {}
}
