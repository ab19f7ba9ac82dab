import Glibc

/// `connect(2)` of a socket to a unix path or a numeric IPv4/IPv6 address, for the command line's
/// clients of a running kiln (`kiln health`'s probe, the FastCGI client of `kiln cache purge` and
/// `kiln cache stats`): the one place the `sockaddr`s are spelt.
public enum SocketConnect {
    /// Where to connect: a unix socket path, or a numeric host (no brackets) and a port.
    public enum Target: Sendable, Equatable {
        case unix(String)
        case tcp(host: String, port: UInt16)

        /// The socket family to create for it.
        public var family: Int32 {
            switch self {
            case .unix: AF_UNIX
            case let .tcp(host, _): host.contains(":") ? AF_INET6 : AF_INET
            }
        }
    }

    /// What `connect(2)` answered (0, or -1 with `errno` set), or why no call was made (a path too
    /// long, a host that is not a numeric address).
    public static func connect(_ fd: Int32, to target: Target) -> Result<Int32, ConnectRefusal> {
        switch target {
        case let .unix(path):
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let bytes = Array(path.utf8)
            guard bytes.count < MemoryLayout.size(ofValue: sa.sun_path), !bytes.contains(0) else {
                return .failure(ConnectRefusal("socket path too long or not text: \(path)"))
            }
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                raw.copyBytes(from: bytes)
                raw[bytes.count] = 0
            }
            return .success(call(fd, &sa))
        case let .tcp(host, port) where target.family == AF_INET6:
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &sa.sin6_addr) == 1 else {
                return .failure(ConnectRefusal("'\(host)' is not a numeric IPv6 address"))
            }
            return .success(call(fd, &sa))
        case let .tcp(host, port):
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &sa.sin_addr) == 1 else {
                return .failure(ConnectRefusal("'\(host)' is not a numeric IPv4 address"))
            }
            return .success(call(fd, &sa))
        }
    }

    private static func call<T>(_ fd: Int32, _ address: inout T) -> Int32 {
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<T>.size)) }
        }
    }
}

/// Why `SocketConnect` made no call.
public struct ConnectRefusal: Error, Sendable, Equatable {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
}
