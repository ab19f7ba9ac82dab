import KilnHTTP
import Glibc

/// Where the master listens for nginx: a unix socket (`unix:/run/kiln/kiln.sock`) or a numeric
/// loopback/interface address with a port (`127.0.0.1:9000`, `[::1]:9000`). Host names are not
/// resolved, so a configuration never depends on DNS at start-up.
public enum ListenAddress: Sendable, Equatable, CustomStringConvertible {
    case unix(path: String)
    /// `host` is a numeric IPv4 or IPv6 address (without brackets).
    case tcp(host: String, port: UInt16)

    /// Longest unix socket path the kernel accepts (`sun_path` is 108 bytes with the final NUL).
    public static let maxUnixPathBytes = 107

    public init(parsing text: String) throws(ListenAddressError) {
        let s = text.trimmingSpacesAndTabs()
        if s.hasPrefix("unix:") {
            let path = String(s.dropFirst(5))
            guard !path.isEmpty else { throw .init(text, "the path after 'unix:' is empty") }
            guard path.utf8.count <= ListenAddress.maxUnixPathBytes else {
                throw .init(text, "the socket path is \(path.utf8.count) bytes; the limit is \(ListenAddress.maxUnixPathBytes)")
            }
            guard !path.utf8.contains(0) else { throw .init(text, "the socket path contains a NUL byte") }
            guard !path.hasSuffix("/") else { throw .init(text, "the socket path names a folder") }
            self = .unix(path: path)
            return
        }
        let host: Substring
        let portText: Substring
        if s.hasPrefix("[") {
            guard let close = s.firstIndex(of: "]"), s[s.index(after: close)...].hasPrefix(":") else {
                throw .init(text, "an IPv6 address is written [::1]:9000")
            }
            host = s[s.index(after: s.startIndex)..<close]
            portText = s[s.index(close, offsetBy: 2)...]
            guard ListenAddress.isIPv6(String(host)) else { throw .init(text, "'\(host)' is not a numeric IPv6 address") }
        } else {
            guard let colon = s.lastIndex(of: ":"), s.firstIndex(of: ":") == colon else {
                throw .init(text, "not an address with a port")
            }
            host = s[..<colon]
            portText = s[s.index(after: colon)...]
            guard ListenAddress.isIPv4(String(host)) else {
                throw .init(text, "'\(host)' is not a numeric IPv4 address; host names are not resolved")
            }
        }
        guard let port = Int(portText), (1...65_535).contains(port) else {
            throw .init(text, "the port must be a number in 1...65535")
        }
        self = .tcp(host: String(host), port: UInt16(port))
    }

    /// The accepted forms, for error messages.
    public static let forms = "unix:/path/to/kiln.sock, 127.0.0.1:9000 or [::1]:9000"

    public var description: String {
        switch self {
        case let .unix(path): "unix:\(path)"
        case let .tcp(host, port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        }
    }

    public var unixPath: String? {
        if case let .unix(path) = self { return path }
        return nil
    }

    /// A socket beside this one: `kiln.sock` → `kiln<suffix>.sock`, or the port + `portOffset`
    /// (nil past 65535). How `status_listen` and `lookup_listen` derive their `auto` address.
    public func beside(suffix: String, portOffset: UInt16) -> ListenAddress? {
        switch self {
        case let .unix(path):
            let base = path.hasSuffix(".sock") ? String(path.dropLast(5)) : path
            return .unix(path: base + suffix + ".sock")
        case let .tcp(host, port):
            let (next, overflow) = port.addingReportingOverflow(portOffset)
            return overflow ? nil : .tcp(host: host, port: next)
        }
    }

    static func isIPv4(_ s: String) -> Bool {
        var a = in_addr()
        return inet_pton(AF_INET, s, &a) == 1
    }

    static func isIPv6(_ s: String) -> Bool {
        var a = in6_addr()
        return inet_pton(AF_INET6, s, &a) == 1
    }
}

/// A `listen` value that is not an address Kiln can bind.
public struct ListenAddressError: Error, Equatable, Sendable, CustomStringConvertible {
    public var text: String
    public var reason: String

    init(_ text: String, _ reason: String) {
        self.text = text
        self.reason = reason
    }

    public var description: String { "invalid listen address '\(text)': \(reason); expected \(ListenAddress.forms)" }
}
