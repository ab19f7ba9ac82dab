import KilnFastCGI
import KilnHTTP
import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// Serves FastCGI requests from the listening socket on fd 0, one connection and one request at
/// a time (FastCGI 1.0, role RESPONDER, no multiplexing).
///
/// Single-threaded and synchronous: `accept4`, read the whole request (`FastCGIConnection`, with
/// its deadline), `handler.handle`, write head, body and FCGI_END_REQUEST in one `write`, close
/// (or wait for the next request on a connection the web server keeps), repeat. A failed write
/// (nginx closed early) ends that connection only: SIGPIPE must be ignored in the process
/// (`Worker` does it).
public final class FastCGIResponder {
    private let listenFD: Int32
    private let logger: Logger
    private let timeouts: FastCGIConnection.Timeouts
    private let limits: FastCGIRequestParser.Limits
    /// The read buffer every connection of this worker uses.
    private var buffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Requests answered so far.
    public private(set) var requestCount = 0
    /// Told when each request begins and ends (the worker's scoreboard slot and hang-up checks).
    public var monitor: RequestMonitor?
    /// Request ids and the access line of each request (the process's `[log]` settings).
    public var accessLog = AccessLog.process
    /// `server.allowed_peers` and `server.peer_secret`; nil: anyone (tests, spawn-fcgi).
    public var peerAccess: PeerAccess?
    /// The signing settings whose signatures the scoreboard (status page, slow log) never shows
    /// (`URLSignature.redacted`); nil: URIs as received.
    public var redaction: URLSignature?
    /// `[tracing]`: each sampled request's spans (nil: tracing off).
    public var tracer: RequestTracer?
    /// Connections closed for `peerAccess`'s allow-list.
    public let refusals = PeerRefusals(listener: "main")

    /// Why `serve` returned.
    public enum Outcome: Equatable, Sendable {
        /// `shouldStop` became true (a stop signal).
        case stopRequested
        /// `maxRequests` requests were answered.
        case maxRequestsReached
        /// The master shut the listening socket down (accept failed with EINVAL).
        case listenerClosed
        /// accept failed for another reason (errno).
        case acceptFailed(Int32)
    }

    /// - Parameters:
    ///   - listenFD: the listening socket, 0 (`FCGI_LISTENSOCK_FILENO`) for workers.
    ///   - requestReadTimeout: how long reading one whole request may take (`server.request_read_timeout`).
    ///   - keepaliveTimeout: how long a kept connection may wait for its next request (`server.keepalive_timeout`).
    public init(listenFD: Int32 = 0, requestReadTimeout: Double = ServerConfiguration.Key.requestReadTimeout.defaultValue,
                keepaliveTimeout: Double = ServerConfiguration.Key.keepaliveTimeout.defaultValue, logger: Logger) {
        self.listenFD = listenFD
        self.logger = logger
        timeouts = .init(requestRead: requestReadTimeout, keepalive: keepaliveTimeout)
        limits = .init()
    }

    /// Accepts and answers requests until `shouldStop()` is true between requests, accept fails, or
    /// `maxRequests` (> 0) have been answered. A request in flight always finishes.
    public func serve(handler: some RequestHandling, maxRequests: Int = 0, shouldStop: () -> Bool) -> Outcome {
        while true {
            if shouldStop() { return .stopRequested }
            // accept4 is not in Swift's Glibc module: accept, then close-on-exec (workers exec
            // nothing; it is hygiene, not a race).
            let fd = accept(listenFD, nil, nil)
            if fd >= 0 {
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
                monitor?.connectionAccepted()
            }
            if fd < 0 {
                let e = Errno.current
                if shouldStop() { return .stopRequested }
                // A draining worker made the shared socket non-blocking (see `drain`): wait here.
                if e == EAGAIN { waitReadable(listenFD) }
                if FastCGIResponder.acceptRetries.contains(e) { continue }
                return e == EINVAL ? .listenerClosed : .acceptFailed(e)
            }
            if let peer = peerAccess?.refusedPeer(fd: fd) {
                refusals.refuse(fd: fd, peer: peer, logger: logger)
                continue
            }
            let connection = FastCGIConnection(fd: fd, timeouts: timeouts, limits: limits)
            if serve(connection, handler: handler, maxRequests: maxRequests, shouldStop: shouldStop) {
                return .maxRequestsReached
            }
        }
    }

    /// Serves the connections still queued on `fd` (the worker's copy of the listening socket)
    /// after a stop signal: accepts without waiting until the queue is empty (EAGAIN) or
    /// `deadline` (monotonic seconds) passes, answering each connection's request. Returns how
    /// many connections it accepted.
    ///
    /// The socket is made non-blocking for that, and the flag belongs to the socket every worker
    /// shares: a worker of the same server that is not stopping then waits in `poll` instead of
    /// `accept` (see `serve`), which costs only a wake-up of every idle worker per connection.
    public func drain(fd: Int32, handler: some RequestHandling, deadline: Double) -> Int {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, fcntl(fd, F_SETFL, flags | O_NONBLOCK) == 0 else { return 0 }
        var accepted = 0
        while MonotonicClock.seconds() < deadline {
            let c = accept(fd, nil, nil)
            if c < 0 {
                let e = Errno.current
                if e == EINTR || (e != EAGAIN && FastCGIResponder.acceptRetries.contains(e)) { continue }
                break
            }
            _ = fcntl(c, F_SETFD, FD_CLOEXEC)
            monitor?.connectionAccepted()
            accepted += 1
            if let peer = peerAccess?.refusedPeer(fd: c) {
                refusals.refuse(fd: c, peer: peer, logger: logger)
                continue
            }
            // The stop flag is set: a connection the web server keeps is closed after its request.
            let connection = FastCGIConnection(fd: c, timeouts: timeouts, limits: limits)
            _ = serve(connection, handler: handler, maxRequests: 0) { true }
        }
        return accepted
    }

    /// Blocks until `fd` is readable (or a signal interrupts).
    private func waitReadable(_ fd: Int32) {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        _ = poll(&p, 1, -1)
    }

    /// accept errors that concern one connection, not the listening socket (accept(2): Linux
    /// passes a new connection's pending network errors on), and interruptions.
    static let acceptRetries: Set<Int32> = [EINTR, EAGAIN, ECONNABORTED, EPROTO, ENETDOWN, ENOPROTOOPT, EHOSTDOWN,
                                            ENONET, EHOSTUNREACH, EOPNOTSUPP, ENETUNREACH, EPERM]

    /// Serves the requests of one connection and closes it. Returns true when `maxRequests` is reached.
    private func serve(_ connection: FastCGIConnection, handler: some RequestHandling, maxRequests: Int,
                       shouldStop: () -> Bool) -> Bool {
        while true {
            let next = buffer.withUnsafeMutableBytes { connection.nextRequest(buffer: $0, shouldStop: shouldStop) }
            guard case let .request(request) = next else {
                if case let .end(end) = next { log(end, connection) }
                connection.close(linger: next == .end(.refused))
                return false
            }
            var httpRequest = HTTPRequest(fastCGIParams: request.params, nonUTF8: request.nonUTF8Params)
            let started = MonotonicClock.nanoseconds()
            let requestID = accessLog.requestID(for: httpRequest)
            let trace = tracer?.begin(httpRequest, requestID: requestID)
            httpRequest.isTraced = trace != nil
            var traced: (response: HTTPResponse, bytes: Int, answered: UInt64)?
            let failed = RequestContext.with(requestID: requestID) { () -> Int32? in
                monitor?.begin(uri: redaction?.redacted(httpRequest.uri) ?? httpRequest.uri, requestID: requestID,
                               connectionFD: connection.fd)
                var response: HTTPResponse
                do throws(PeerAccessError) {
                    try peerAccess?.check(params: request.params)
                    response = handler.handle(httpRequest)
                } catch {
                    response = FastCGIResponder.refusal(error)
                }
                response.headers.append((HeaderName.xRequestID, requestID))
                let records = FastCGIResponder.records(response, headOnly: httpRequest.method == "HEAD", requestID: request.id)
                monitor?.responding()
                let failed = connection.write(records.bytes)
                // A lookup lane's hand-off is counted once, by the render worker that answers it.
                monitor?.end(status: response.status, bodyBytes: httpRequest.method == "HEAD" ? 0 : response.body.count,
                             cache: response.cacheOutcome, counted: !response.headers.contains { $0.0 == HeaderName.xAccelRedirect })
                if let failed {
                    logger.debug("client went away while writing \(response.status) for \(httpRequest.uri): \(Errno.text(failed))")
                }
                let bytes = failed == nil ? AccessLog.bodyBytes(response, method: httpRequest.method) : 0
                let answered = MonotonicClock.nanoseconds()
                accessLog.write(httpRequest, response, bytes: bytes,
                                milliseconds: Double(answered - started) / 1_000_000, logger: logger)
                if trace != nil { traced = (response, bytes, answered) }
                return failed
            }
            let keep = request.keepConnection && failed == nil
            if !keep { connection.close() }
            let late = handler.afterResponse()
            if let trace, let tracer, let traced {
                tracer.end(trace, httpRequest, traced.response, uri: redaction?.redacted(httpRequest.uri) ?? httpRequest.uri,
                           bytes: traced.bytes, requestID: requestID, answered: traced.answered, late: late)
            }
            requestCount += 1
            if maxRequests > 0 && requestCount >= maxRequests {
                connection.close()
                return true
            }
            if !keep { return false }
            if shouldStop() {
                connection.close()
                return false
            }
        }
    }

    private func log(_ end: FastCGIConnection.End, _ connection: FastCGIConnection) {
        switch end {
        case .timedOut(idle: true, _):
            logger.debug("closed a kept FastCGI connection idle for keepalive_timeout (\(timeouts.keepalive) s)")
        case let .timedOut(idle: false, bytes):
            logger.warning("closed a FastCGI connection that did not send a whole request within request_read_timeout (\(timeouts.requestRead) s; \(bytes) bytes received)")
        case .peerClosed(midRequest: true):
            logger.info("the FastCGI peer closed the connection in the middle of a request (\(connection.bytesRead) bytes received)")
        case .peerClosed(midRequest: false), .stopRequested:
            break
        case .refused:
            logger.info("refused a FastCGI request (a role other than RESPONDER, or aborted); connection closed")
        case let .protocolError(error):
            logger.warning("FastCGI protocol error, connection closed: \(error)")
        case let .failed(e):
            logger.info("FastCGI connection failed: \(Errno.text(e))")
        }
    }

    /// The answer as FastCGI records: the CGI head and, unless `headOnly`, the body, as STDOUT
    /// records, then the end of STDOUT and FCGI_END_REQUEST. Adds `Content-Length` when the
    /// handler did not set one (so nginx need not chunk); a HEAD answer keeps the length of the
    /// full body. Everything leaves in one `write` (libfcgi's 8 KB stream took nine for 73 KB).
    static func records(_ response: HTTPResponse, headOnly: Bool, requestID: Int) -> FastCGIRecords {
        var response = response
        if response.header(HeaderName.contentLength) == nil && FastCGIResponder.mayHaveBody(response.status) {
            response.headers.append((HeaderName.contentLength, String(response.body.count)))
        }
        var records = FastCGIRecords(requestID: requestID)
        records.reserve(payload: response.body.count + 1024)
        var head = response.cgiHead
        head.withUTF8 { records.appendStdout($0) }
        if !headOnly { response.body.withUnsafeBufferPointer { records.appendStdout($0) } }
        records.appendEnd()
        return records
    }

    /// The answer to a request without the peer secret: the one-line reason, never cached.
    static func refusal(_ error: PeerAccessError) -> HTTPResponse {
        let mapped = ErrorMapping.map(error)
        let body = Array((mapped.message + "\n").utf8)
        var response = HTTPResponse(status: mapped.status, headers: [
            (HeaderName.contentType, "text/plain; charset=utf-8"),
            (HeaderName.contentLength, String(body.count)),
            (HeaderName.cacheControl, "no-store"),
            (HeaderName.xContentTypeOptions, "nosniff"),
        ], body: body)
        response.reason = mapped.logMessage
        return response
    }

    static func mayHaveBody(_ status: Int) -> Bool {
        !(100..<200).contains(status) && status != 204 && status != 304
    }
}
