import Glibc
import KilnTestBytes

/// A minimal FastCGI client (one responder request per connection, as nginx sends them), so the
/// tests need no cgi-fcgi or Python. The records come from `FastCGIBytes` (KilnTestBytes).
struct FastCGITestClient {
    enum Target {
        case unix(String)
        case tcp(String, UInt16)
    }

    struct Reply {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var sawEndRequest: Bool
        var bodyText: String { String(decoding: body, as: UTF8.self) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    var target: Target
    var timeout: Double = 10

    func get(_ uri: String, method: String = "GET", headers: [String: String] = [:]) throws -> Reply {
        var params = ["REQUEST_METHOD": method, "REQUEST_URI": uri, "DOCUMENT_URI": uri,
                      "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1"]
        for (k, v) in headers { params["HTTP_" + String(k.uppercased().map { $0 == "-" ? "_" : $0 })] = v }
        return try request(params: params)
    }

    func request(params: [String: String]) throws -> Reply {
        let fd = try connectSocket()
        defer { close(fd) }
        let out = FastCGIBytes.request(params: params)   // BEGIN_REQUEST (responder, no keep-conn), params, stdin
        try writeAll(fd, out)

        var stdout: [UInt8] = []
        var ended = false
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        readLoop: while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "read: \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            buffer += chunk[0..<n]
            while buffer.count >= 8 {
                let contentLength = Int(buffer[4]) << 8 | Int(buffer[5])
                let total = 8 + contentLength + Int(buffer[6])
                guard buffer.count >= total else { break }
                let type = buffer[1]
                if type == FastCGIBytes.RecordType.stdout { stdout += buffer[8..<(8 + contentLength)] }
                if type == FastCGIBytes.RecordType.endRequest { ended = true }
                buffer.removeFirst(total)
                if ended { break readLoop }
            }
        }
        return try Self.parse(stdout, ended: ended)
    }

    static func parse(_ stdout: [UInt8], ended: Bool) throws -> Reply {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let at = stdout.indices.first(where: { stdout[$0...].starts(with: separator) }) else {
            throw Failure(description: "no CGI head in \(stdout.count) bytes (end request: \(ended))")
        }
        let head = String(decoding: stdout[..<at], as: UTF8.self)
        var headers: [String: String] = [:]
        for line in head.split(separator: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        let status = headers["status"].flatMap { Int($0.prefix(3)) } ?? 200
        return Reply(status: status, headers: headers, body: Array(stdout[(at + 4)...]), sawEndRequest: ended)
    }

    func connectSocket() throws -> Int32 {
        switch target {
        case let .unix(path):
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            setTimeout(fd)
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            let rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard rc == 0 else {
                let e = errno
                close(fd)
                throw Failure(description: "connect \(path): \(String(cString: strerror(e)))")
            }
            return fd
        case let .tcp(host, port):
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            setTimeout(fd)
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &sa.sin_addr)
            let rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard rc == 0 else {
                let e = errno
                close(fd)
                throw Failure(description: "connect \(host):\(port): \(String(cString: strerror(e)))")
            }
            return fd
        }
    }

    func setTimeout(_ fd: Int32) {
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws {
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + off, $0.count - off, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "write: \(String(cString: strerror(errno)))")
            }
            off += n
        }
    }
}
