import CFastCGI
import Glibc
import KilnSystem
import Logging

/// Serves FastCGI requests from the listening socket on fd 0, one at a time, over libfcgi.
///
/// Single-threaded and synchronous: `accept`, read params, `handler.handle`, write head and body,
/// finish (close the connection), repeat. A failed write (nginx closed early) ends that request only:
/// SIGPIPE must be ignored in the process (`Worker` does it before creating the responder, which also
/// keeps libfcgi from installing its own SIGPIPE handler).
public final class FastCGIResponder {
    /// libfcgi keeps pointers to the request inside its streams, so it lives at a fixed address.
    private let request: UnsafeMutablePointer<FCGX_Request>
    private let logger: Logger
    /// Requests answered so far.
    public private(set) var requestCount = 0
    /// The listening socket is AF_UNIX.
    private let isUnixSocket: Bool

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

    /// - Parameter listenFD: the listening socket, 0 (`FCGI_LISTENSOCK_FILENO`) for workers.
    public init(listenFD: Int32 = 0, logger: Logger) throws(FastCGIError) {
        guard FCGX_Init() == 0 else { throw FastCGIError.initFailed }
        self.logger = logger
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listenFD, $0, &length) }
        }
        isUnixSocket = named == 0 && address.ss_family == sa_family_t(AF_UNIX)
        request = UnsafeMutablePointer<FCGX_Request>.allocate(capacity: 1)
        request.initialize(to: FCGX_Request())
        guard FCGX_InitRequest(request, listenFD, FCGI_FAIL_ACCEPT_ON_INTR) == 0 else {
            request.deallocate()
            throw FastCGIError.initFailed
        }
    }

    deinit {
        FCGX_Free(request, 1)
        request.deinitialize(count: 1)
        request.deallocate()
    }

    /// Accepts and answers requests until `shouldStop()` is true between requests, accept fails, or
    /// `maxRequests` (> 0) have been answered. A request in flight always finishes.
    public func serve(handler: some RequestHandling, maxRequests: Int = 0, shouldStop: () -> Bool) -> Outcome {
        while true {
            if shouldStop() { return .stopRequested }
            let rc = FCGX_Accept_r(request)
            if rc < 0 {
                if shouldStop() { return .stopRequested }
                let e = Int32(-rc)
                return e == EINVAL ? .listenerClosed : .acceptFailed(e)
            }
            let params = FastCGIResponder.params(request.pointee.envp)
            let httpRequest = HTTPRequest(fastCGIParams: params)
            let response = handler.handle(httpRequest)
            write(response, headOnly: httpRequest.method == "HEAD", uri: httpRequest.uri)
            // On a unix socket nothing is gained by libfcgi's lingering close (shutdown, then
            // wait up to 2 s for nginx to close first): the peer cannot be reset.
            if isUnixSocket { request.pointee.detached = 1 }
            FCGX_Finish_r(request)
            handler.afterResponse()
            requestCount += 1
            if maxRequests > 0 && requestCount >= maxRequests { return .maxRequestsReached }
        }
    }

    /// Collects every `NAME=value` of a FastCGI param array.
    static func params(_ envp: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> [String: String] {
        var out: [String: String] = [:]
        guard var p = envp else { return out }
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") {
                out[String(s[..<eq])] = String(s[s.index(after: eq)...])
            }
            p += 1
        }
        return out
    }

    /// Writes the CGI head and, unless `headOnly`, the body. Adds `Content-Length` when the handler
    /// did not set one (so nginx need not chunk); a HEAD answer keeps the length of the full body.
    ///
    /// The answer goes out as FastCGI STDOUT records in one `write` on the connection instead of
    /// through libfcgi's 8 KB stream buffer: a 73 KB image took nine `write` calls (and as many
    /// wake-ups of nginx) that way. libfcgi's stream stays empty, so `FCGX_Finish_r` then only
    /// adds the end-of-stream record and FCGI_END_REQUEST, as the protocol wants.
    func write(_ response: HTTPResponse, headOnly: Bool, uri: String) {
        var response = response
        if response.header("Content-Length") == nil && FastCGIResponder.mayHaveBody(response.status) {
            response.headers.append(("Content-Length", String(response.body.count)))
        }
        var records = FastCGIRecords(requestID: Int(request.pointee.requestId))
        records.reserve(payload: response.body.count + 1024)
        var head = response.cgiHead
        head.withUTF8 { records.appendStdout($0) }
        if !headOnly { response.body.withUnsafeBufferPointer { records.appendStdout($0) } }
        if let e = records.write(to: request.pointee.ipcFd) {
            logger.debug("client went away while writing \(response.status) for \(uri): \(Errno.text(e))")
        }
    }

    static func mayHaveBody(_ status: Int) -> Bool {
        !(100..<200).contains(status) && status != 204 && status != 304
    }
}

public enum FastCGIError: Error, Sendable, CustomStringConvertible {
    case initFailed

    public var description: String {
        switch self {
        case .initFailed: "libfcgi initialisation failed"
        }
    }
}
