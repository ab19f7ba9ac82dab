import KilnFastCGI
import KilnHTTP
import Glibc
import KilnPOSIX

/// `kiln health`: asks a running kiln whether it is healthy, for Docker's `HEALTHCHECK` and
/// systemd (imgproxy's `imgproxy health`). By default it speaks FastCGI to the master's status
/// socket (`server.status_listen`), so it needs neither nginx nor an HTTP port; `--url` asks over
/// HTTP instead (through nginx: `http://127.0.0.1:8080/_kiln/health`).
public enum HealthProbe {
    public struct Answer: Sendable, Equatable {
        public var status: Int
        public var body: String
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// `GET path` over FastCGI to `address`, within `timeout` seconds; with `peerSecret` (the
    /// server's `server.peer_secret`, when set) as the param `KILN_PEER_SECRET`.
    public static func fastCGI(_ address: ListenAddress, path: String = "/_kiln/health", peerSecret: String = "",
                               timeout: Double = 3) throws -> Answer {
        let target: FastCGIClient.Address
        switch address {
        case let .unix(p): target = .unix(path: p)
        case let .tcp(host, port): target = .tcp(host: host, port: port)
        }
        do throws(FastCGIClient.Failure) {
            let answer = try FastCGIClient(target, timeout: timeout)
                .request("GET", path, params: peerSecret.isEmpty ? [] : [(PeerAccess.secretParam, peerSecret)])
            return Answer(status: answer.status, body: answer.text)
        } catch {
            throw Failure(description: error.description)
        }
    }

    /// `GET` of an `http://host:port/path` URL (numeric host or `localhost`).
    public static func http(url: String, timeout: Double = 3) throws -> Answer {
        guard url.hasPrefix("http://") else { throw Failure(description: "only http:// URLs: \(url)") }
        let rest = url.dropFirst(7)
        let hostPort = rest.prefix { $0 != "/" }
        let path = rest.dropFirst(hostPort.count)
        var host = String(hostPort)
        var port: UInt16 = 80
        if let colon = hostPort.lastIndex(of: ":"), !hostPort.hasSuffix("]") {
            host = String(hostPort[..<colon])
            guard let p = UInt16(hostPort[hostPort.index(after: colon)...]) else { throw Failure(description: "bad port in \(url)") }
            port = p
        }
        if host == "localhost" { host = "127.0.0.1" }
        if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
        let fd = try connect(.tcp(host: host, port: port), timeout: timeout)
        defer { close(fd) }
        try send(fd, Array("GET \(path.isEmpty ? "/" : String(path)) HTTP/1.0\r\nHost: \(hostPort)\r\nConnection: close\r\n\r\n".utf8))
        return try parse(try receiveAll(fd))
    }

    /// The status and body of an HTTP/1.x answer (the FastCGI path reads its answer with
    /// `FastCGIClient`).
    static func parse(_ bytes: [UInt8]) throws -> Answer {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let split = text.firstRange(of: "\r\n\r\n") else { throw Failure(description: "no answer") }
        guard let first = text[..<split.lowerBound].split(separator: "\r\n").first, first.hasPrefix("HTTP/"),
              let status = Int(first.split(separator: " ").dropFirst().first ?? "") else {
            throw Failure(description: "not an HTTP answer")
        }
        return Answer(status: status, body: String(text[split.upperBound...]))
    }

    static func connect(_ address: ListenAddress, timeout: Double) throws -> Int32 {
        let target: SocketConnect.Target
        switch address {
        case let .unix(path): target = .unix(path)
        case let .tcp(host, port): target = .tcp(host: host, port: port)
        }
        let fd = socket(target.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(Errno.text(Errno.current))") }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1e6))
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        switch SocketConnect.connect(fd, to: target) {
        case .success(0):
            return fd
        case .success:
            let e = Errno.current
            close(fd)
            throw Failure(description: "cannot connect to \(address): \(Errno.text(e))")
        case .failure(let refusal):
            close(fd)
            throw Failure(description: refusal.reason)
        }
    }

    static func send(_ fd: Int32, _ bytes: [UInt8]) throws {
        do {
            try FileDescriptorIO.writeAll(fd, bytes)
        } catch {
            throw Failure(description: "cannot send: \(error)")
        }
    }

    static func receiveAll(_ fd: Int32) throws -> [UInt8] {
        do {
            return try FileDescriptorIO.readAll(fd)
        } catch {
            throw Failure(description: "no answer: \(error)")
        }
    }
}
