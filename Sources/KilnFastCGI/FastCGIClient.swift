import Glibc
import KilnPOSIX

/// A tiny synchronous FastCGI client: one request (responder role, params, empty stdin) on a new
/// connection to a unix socket or a numeric TCP address, its STDOUT read until FCGI_END_REQUEST,
/// everything within one deadline. What the command line needs to talk to a master's status
/// socket (`kiln cache purge` on every host of `purge.hosts`, `kiln cache stats` reading
/// `/_kiln/metrics`); never used on a request path.
public struct FastCGIClient: Sendable {
    public enum Address: Sendable, Equatable, CustomStringConvertible {
        case unix(path: String)
        /// A numeric IPv4 or IPv6 address (without brackets).
        case tcp(host: String, port: UInt16)

        public var description: String {
            switch self {
            case let .unix(path): "unix:\(path)"
            case let .tcp(host, port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
            }
        }
    }

    /// The answer: the CGI `Status` (200 when the answer has none), the headers (names lower
    /// case) and the body.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var headers: [String: String]
        public var body: [UInt8]
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    public let address: Address
    /// Seconds for the whole exchange: connect, send, and the answer to its end.
    public let timeout: Double
    /// Most bytes of records read before giving up.
    public var maxResponseBytes = 16 << 20

    public init(_ address: Address, timeout: Double = 5) {
        self.address = address
        self.timeout = timeout
    }

    /// `method uri` (the query, if any, after `?`), with `params` added to the CGI ones (a peer
    /// secret: `KILN_PEER_SECRET`).
    public func request(_ method: String, _ uri: String, params extra: [(String, String)] = []) throws(Failure) -> Response {
        let deadline = MonotonicClock.nanoseconds() + UInt64(max(0.001, timeout) * 1e9)
        let fd = try connect(deadline: deadline)
        defer { close(fd) }
        let path = String(uri.prefix { $0 != "?" })
        let query = uri.dropFirst(path.count).dropFirst()
        let params: [(String, String)] = [("REQUEST_METHOD", method), ("REQUEST_URI", uri), ("DOCUMENT_URI", path),
                                          ("QUERY_STRING", String(query)), ("SERVER_PROTOCOL", "HTTP/1.1"),
                                          ("GATEWAY_INTERFACE", "CGI/1.1"), ("CONTENT_LENGTH", "0")] + extra
        let pairs = FastCGINameValuePairs.encode(params)
        guard pairs.count <= 65_535 else { throw Failure("the request's params are too long") }
        var out = FastCGIRecords.record(type: FastCGI.RecordType.beginRequest, requestID: 1,
                                        content: [0, UInt8(FastCGI.Role.responder), 0, 0, 0, 0, 0, 0])
        out += FastCGIRecords.record(type: FastCGI.RecordType.params, requestID: 1, content: pairs)
        out += FastCGIRecords.record(type: FastCGI.RecordType.params, requestID: 1, content: [])
        out += FastCGIRecords.record(type: FastCGI.RecordType.stdin, requestID: 1, content: [])
        try send(fd, out, deadline: deadline)
        return try FastCGIClient.parse(try receive(fd, deadline: deadline))
    }

    /// The STDOUT of the records in `bytes` (up to FCGI_END_REQUEST) as a CGI answer.
    static func parse(_ stdout: [UInt8]) throws(Failure) -> Response {
        var headerEnd: Int?
        var i = 0
        while i + 3 < stdout.count {
            if stdout[i] == 13, stdout[i + 1] == 10, stdout[i + 2] == 13, stdout[i + 3] == 10 {
                headerEnd = i
                break
            }
            i += 1
        }
        guard let headerEnd else { throw Failure("the answer has no header") }
        var status = 200
        var headers: [String: String] = [:]
        for line in String(decoding: stdout[..<headerEnd], as: UTF8.self).split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = String(line[line.index(after: colon)...].drop { $0 == " " })
            headers[name] = value
            if name == "status", let code = Int(value.prefix(3)) { status = code }
        }
        return Response(status: status, headers: headers, body: Array(stdout[(headerEnd + 4)...]))
    }

    // MARK: Socket

    private static func remaining(_ deadline: UInt64) -> Int32 {
        let now = MonotonicClock.nanoseconds()
        return now >= deadline ? 0 : Int32(min(Int64(Int32.max), Int64((deadline - now) / 1_000_000) + 1))
    }

    private func connect(deadline: UInt64) throws(Failure) -> Int32 {
        let target: SocketConnect.Target
        switch address {
        case let .unix(path): target = .unix(path)
        case let .tcp(host, port): target = .tcp(host: host, port: port)
        }
        let fd = socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(Errno.text(Errno.current))") }
        let rc: Int32
        switch SocketConnect.connect(fd, to: target) {
        case .success(let answered): rc = answered
        case .failure(let refusal):
            close(fd)
            throw Failure(refusal.reason)
        }
        if rc != 0 {
            let e = Errno.current
            guard e == EINPROGRESS || e == EAGAIN else {
                close(fd)
                throw Failure("cannot connect to \(address): \(Errno.text(e))")
            }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            guard poll(&p, 1, FastCGIClient.remaining(deadline)) == 1,
                  getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length) == 0, soError == 0 else {
                close(fd)
                throw Failure(soError != 0 ? "cannot connect to \(address): \(Errno.text(soError))"
                                           : "cannot connect to \(address): no answer within \(timeout) s")
            }
        }
        return fd
    }

    private func send(_ fd: Int32, _ bytes: [UInt8], deadline: UInt64) throws(Failure) {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n > 0 {
                sent += n
                continue
            }
            let e = Errno.current
            guard n < 0, e == EAGAIN || e == EINTR else { throw Failure("cannot send to \(address): \(Errno.text(e))") }
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            guard poll(&p, 1, FastCGIClient.remaining(deadline)) == 1 else {
                throw Failure("\(address) took no request within \(timeout) s")
            }
        }
    }

    /// Reads records until FCGI_END_REQUEST; their STDOUT.
    private func receive(_ fd: Int32, deadline: UInt64) throws(Failure) -> [UInt8] {
        var buffer: [UInt8] = []
        var stdout: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var consumed = 0
        while true {
            // Whole records first.
            while buffer.count - consumed >= 8 {
                let type = buffer[consumed + 1]
                let length = Int(buffer[consumed + 4]) << 8 | Int(buffer[consumed + 5])
                let padding = Int(buffer[consumed + 6])
                guard buffer.count - consumed >= 8 + length + padding else { break }
                let content = (consumed + 8)..<(consumed + 8 + length)
                if type == FastCGI.RecordType.stdout { stdout += buffer[content] }
                if type == FastCGI.RecordType.endRequest { return stdout }
                consumed += 8 + length + padding
            }
            guard buffer.count < maxResponseBytes else { throw Failure("\(address) answered more than \(maxResponseBytes) bytes") }
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&p, 1, FastCGIClient.remaining(deadline)) == 1 else {
                throw Failure("\(address) did not answer within \(timeout) s")
            }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 {
                buffer += chunk[..<n]
            } else if n == 0 {
                throw Failure("\(address) closed the connection before the end of its answer")
            } else if Errno.current != EAGAIN && Errno.current != EINTR {
                throw Failure("cannot read from \(address): \(Errno.text(Errno.current))")
            }
        }
    }
}
