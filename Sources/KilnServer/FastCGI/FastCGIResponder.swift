import CFastCGI
import Glibc
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
    func write(_ response: HTTPResponse, headOnly: Bool, uri: String) {
        var response = response
        if response.header("Content-Length") == nil && FastCGIResponder.mayHaveBody(response.status) {
            response.headers.append(("Content-Length", String(response.body.count)))
        }
        let out = request.pointee.out
        var head = response.cgiHead
        let ok = head.withUTF8 { put($0, out) }
        if ok && !headOnly && !response.body.isEmpty {
            _ = response.body.withUnsafeBufferPointer { put($0, out) }
        }
        let e = FCGX_GetError(out)
        if e != 0 {
            let why = e > 0 ? errnoText(e) : "FastCGI error \(e)"
            logger.debug("client went away while writing \(response.status) for \(uri): \(why)")
        }
    }

    private func put(_ bytes: UnsafeBufferPointer<UInt8>, _ stream: UnsafeMutablePointer<FCGX_Stream>?) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        var offset = 0
        while offset < bytes.count {
            let n = min(bytes.count - offset, 1 << 30)
            let written = (base + offset).withMemoryRebound(to: CChar.self, capacity: n) {
                FCGX_PutStr($0, Int32(n), stream)
            }
            if written != Int32(n) { return false }
            offset += n
        }
        return true
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
