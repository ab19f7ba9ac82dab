import KilnFastCGI
import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnPOSIX
import Logging

/// What the master answers itself, without a worker: `/_kiln/health` on the status socket
/// (`server.status_listen`), so a load balancer's check never waits behind busy workers
/// (imgproxy#408), and a fast 503 with `Retry-After` for the connections queued on the main
/// socket once connections have waited there for `server.queue_timeout` while every worker was
/// busy (back-pressure: an overloaded server says so at once instead of letting requests wait in
/// the listen queue until nginx gives up).
///
/// The kernel does not say how long a connection has been queued, but it says how many are
/// (`kiln_listen_queue_length`): the master samples the queue's length and the count of accepted
/// connections every turn of its loop (50 ms), and `QueueWaitTracker` turns them into the wait of
/// the oldest queued connection. When that reaches `queue_timeout` and no worker is free, it
/// accepts and answers 503 until the connections left have waited less. A queue that is never
/// empty but moves (more connections than workers, short renders) is not overload. Where the
/// length is unknown, the queue counts as waiting since it was last seen empty. A worker that
/// becomes free meanwhile takes connections as usual.
///
/// The master never blocks on a client: accepting is bounded (`kiln_accept_within`, a worker may
/// take the connection first) and so is reading the request (`answerTimeout`).
extension Master {
    /// How long the master waits for a whole request on a connection it accepted.
    static let answerTimeout = 0.25
    /// Most connections answered with 503 per loop turn (signals and deadlines are not delayed).
    static let overloadBatch = 64

    /// Polls the status socket, and the main socket while overloaded, for up to `milliseconds`.
    func pollSockets(milliseconds: Int32) {
        var fds: [pollfd] = []
        if let statusSocket { fds.append(pollfd(fd: statusSocket.fd, events: Int16(POLLIN), revents: 0)) }
        if isOverloaded(), let socket { fds.append(pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)) }
        guard !fds.isEmpty else {
            Sleep.milliseconds(Int(milliseconds))
            return
        }
        guard poll(&fds, nfds_t(fds.count), milliseconds) > 0 else { return }
        for p in fds where p.revents & Int16(POLLIN) != 0 {
            if p.fd == statusSocket?.fd {
                answerStatusConnection()
            } else {
                answerOverloadedQueue()
            }
        }
    }

    /// Samples the main socket's listen queue for the supervisor: its length and the count of
    /// accepted connections, or where the kernel does not tell the length, a poll that does not wait.
    func sampleQueue() {
        guard let socket, configuration.queueTimeout > 0 else { return }
        if let scoreboard {
            let accepted = scoreboard.global(.acceptedConnections)
            let queued = kiln_listen_queue_length(socket.fd)
            if queued >= 0 {
                feed(.queueSampled(.length(accepted: accepted, queued: Int(queued))))
                return
            }
        }
        var p = pollfd(fd: socket.fd, events: Int16(POLLIN), revents: 0)
        let waiting = poll(&p, 1, 0) > 0 && p.revents & Int16(POLLIN) != 0
        feed(.queueSampled(.waiting(waiting)))
    }

    /// The supervisor's overload rule on a fresh look at the scoreboard (`Supervisor.isOverloaded`).
    func isOverloaded() -> Bool {
        guard configuration.queueTimeout > 0, !supervisor.isStopping else { return false }
        var slots: [pid_t: Scoreboard.Slot] = [:]
        if let scoreboard {
            for w in supervisor.currentWorkers { if let slot = scoreboard.read(w.board) { slots[w.pid] = slot } }
        }
        let view = BoardView(accepted: scoreboard?.global(.acceptedConnections), slots: slots)
        return supervisor.isOverloaded(view, now: Master.now())
    }

    func answerOverloadedQueue() {
        guard let socket else { return }
        var answered = 0
        var emptied = false
        while answered < Master.overloadBatch && isOverloaded() {
            let fd = kiln_accept_within(socket.fd, 10)
            guard fd >= 0 else {
                emptied = true  // empty now (or a worker was faster)
                break
            }
            answered += 1
            scoreboard?.addGlobal(.acceptedConnections, 1)
            guard admits(fd, refusals: mainRefusals) else { continue }
            answer(fd) { _ in Master.overloadResponse(queueTimeout: configuration.queueTimeout) }
            // A health check never waits behind the shedding.
            answerStatusIfWaiting()
        }
        feed(.shed(count: answered, queueEmptied: emptied))
    }

    func answerStatusIfWaiting() {
        guard let statusSocket else { return }
        var p = pollfd(fd: statusSocket.fd, events: Int16(POLLIN), revents: 0)
        if poll(&p, 1, 0) > 0 && p.revents & Int16(POLLIN) != 0 { answerStatusConnection() }
    }

    func answerStatusConnection() {
        guard let statusSocket else { return }
        let fd = kiln_accept_within(statusSocket.fd, 10)
        guard fd >= 0, admits(fd, refusals: statusRefusals) else { return }
        answer(fd) { request in statusResponse(for: request) }
    }

    /// Whether the peer of the accepted `fd` is in `server.allowed_peers`; if not, `fd` is closed
    /// unread and counted.
    func admits(_ fd: Int32, refusals: PeerRefusals) -> Bool {
        guard let peer = peerAccess.refusedPeer(fd: fd) else { return true }
        refusals.refuse(fd: fd, peer: peer, logger: logger)
        return false
    }

    /// Reads one request from the accepted connection `fd` (bounded by `answerTimeout`), writes
    /// the response `respond` gives, closes the connection. A request without `server.peer_secret`
    /// (when set) gets the workers' 403 instead: the status page and metrics tell what the server
    /// is doing, so they are guarded like the images.
    func answer(_ fd: Int32, _ respond: (HTTPRequest) -> HTTPResponse) {
        let connection = FastCGIConnection(fd: fd, timeouts: .init(requestRead: Master.answerTimeout, keepalive: 0))
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let next = buffer.withUnsafeMutableBytes { connection.nextRequest(buffer: $0, shouldStop: { false }) }
        guard case let .request(request) = next else {
            connection.close(linger: next == .end(.refused))
            return
        }
        let http = HTTPRequest(fastCGIParams: request.params)
        let response: HTTPResponse
        do throws(PeerAccessError) {
            try peerAccess.check(params: request.params)
            response = respond(http)
        } catch {
            response = FastCGIResponder.refusal(error)
        }
        let records = FastCGIResponder.records(response, headOnly: http.method == "HEAD", requestID: request.id)
        _ = connection.write(records.bytes)
        connection.close()
    }

    static func overloadResponse(queueTimeout: Double) -> HTTPResponse {
        let retry = max(1, Int(queueTimeout.rounded(.up)))
        return textResponse(503, "overloaded: every worker has been busy for more than \(Supervisor.format(queueTimeout)) s; retry later",
                            extra: [(HeaderName.retryAfter, String(retry))])
    }

    /// The status socket's pages: `/_kiln/health`, `/_kiln/status` (`?json`), `/_kiln/metrics`;
    /// and `POST /_kiln/purge` (`Master+Purge`).
    func statusResponse(for request: HTTPRequest) -> HTTPResponse {
        if request.rawPath == Master.purgePath { return purgeResponse(for: request) }
        guard request.method == "GET" || request.method == "HEAD" else {
            return Master.textResponse(405, "method \(request.method) not allowed; use GET or HEAD", extra: [(HeaderName.allow, "GET, HEAD")])
        }
        let query = request.uri.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        switch request.rawPath {
        case "/_kiln/health": return healthResponse()
        case "/_kiln/metrics": return metricsResponse()
        case "/_kiln/status": return statusPageResponse(json: query.split(separator: "&").contains("json"))
        default: return Master.textResponse(404, "the status socket answers /_kiln/health, /_kiln/status, /_kiln/metrics and POST /_kiln/purge")
        }
    }

    /// `/_kiln/health`: 200 while at least one worker of the current generation runs, else 503.
    func healthResponse() -> HTTPResponse {
        let current = currentSlots()
        let busy = current.filter { $0.slot.isBusy }.count
        let summary = "generation \(supervisor.generation), \(current.count) of \(configuration.slots) workers running, \(busy) busy"
        if current.isEmpty || supervisor.isStopping {
            return Master.textResponse(503, supervisor.isStopping ? "stopping: \(summary)" : "no worker running: \(summary)",
                                       extra: [(HeaderName.retryAfter, "1")])
        }
        return Master.textResponse(200, "ok: \(summary)")
    }

    static func textResponse(_ status: Int, _ message: String, extra: [(String, String)] = []) -> HTTPResponse {
        let body = Array((message + "\n").utf8)
        return HTTPResponse(status: status, headers: [
            (HeaderName.contentType, "text/plain; charset=utf-8"),
            (HeaderName.contentLength, String(body.count)),
            (HeaderName.cacheControl, "no-store"),
        ] + extra, body: body)
    }
}
