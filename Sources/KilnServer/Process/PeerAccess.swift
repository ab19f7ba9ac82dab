import KilnFastCGI
import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// Who may talk to Kiln over TCP. FastCGI has no authentication: whoever connects is believed
/// (its `KILN_TRUSTED` param skips signatures), so a server listening on TCP (a fleet behind one
/// nginx, `nginx/kiln-hosts.conf`) takes two guards:
///
/// - `server.allowed_peers`: a connection from an address outside the list is closed right after
///   accept, before a byte is read, on the main socket (workers, and the master's overload answers)
///   and on the status socket. Unix sockets are not checked (their file mode decides).
/// - `server.peer_secret`: when set, every request on the main socket must carry the FastCGI param
///   `KILN_PEER_SECRET` with that value (`fastcgi_param KILN_PEER_SECRET ...` in nginx), compared in
///   constant time; otherwise 403 with a one-line reason and nothing rendered. The param never
///   reaches `HTTPRequest`, so no log line or handler sees it.
public struct PeerAccess: Sendable {
    /// Networks a TCP peer must be in.
    public var allowedPeers: [IPNetwork]
    /// The shared secret's bytes; nil: no secret is asked for.
    public var secret: [UInt8]?

    /// The FastCGI param that carries the secret.
    public static let secretParam = PeerAccessError.secretParam

    public init(allowedPeers: [IPNetwork] = IPNetwork.loopback, secret: [UInt8]? = nil) {
        self.allowedPeers = allowedPeers
        self.secret = secret.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The guards of a configuration; reads `peer_secret_file` when set.
    public init(_ configuration: ServerConfiguration) throws(ConfigError) {
        self.init(allowedPeers: configuration.allowedPeers, secret: Array(try configuration.resolvedPeerSecret().utf8))
    }

    /// nil when the peer of the accepted connection `fd` may talk to Kiln (a unix socket, or an
    /// address in `allowedPeers`); else its address as text, for the log.
    public func refusedPeer(fd: Int32) -> String? {
        var bytes = [UInt8](repeating: 0, count: 16)
        let n = bytes.withUnsafeMutableBufferPointer { kiln_peer_address(fd, $0.baseAddress) }
        if n == 0 { return nil }
        guard n > 0 else { return "an unknown address (\(Errno.text(Errno.current)))" }
        return refusedPeer(Array(bytes.prefix(Int(n))))
    }

    /// nil when `address` (4 or 16 bytes) is in `allowedPeers`; else the address as text.
    public func refusedPeer(_ address: [UInt8]) -> String? {
        allowedPeers.contains { $0.contains(address) } ? nil : IPNetwork.format(address)
    }

    /// Throws unless the request's params carry the secret (when one is set).
    public func check(params: [String: String]) throws(PeerAccessError) {
        guard let secret else { return }
        guard let given = params[PeerAccess.secretParam] else { throw .missingSecret }
        guard PeerAccess.constantTimeEquals(Array(given.utf8), secret) else { throw .wrongSecret }
    }

    /// Compares every byte whatever the first difference; only the lengths' equality shows in
    /// the time taken (the secret's length is not what protects it).
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var diff = UInt8(a.count == b.count ? 0 : 1)
        let n = max(a.count, b.count)
        for i in 0..<n {
            let x = i < a.count ? a[i] : 0
            let y = i < b.count ? b[i] : 0
            diff |= x ^ y
        }
        return diff == 0
    }
}

/// Counts the connections closed by `server.allowed_peers` and logs them at most once every
/// `interval` seconds (the first at once), so a scanner cannot flood the log.
public final class PeerRefusals {
    public private(set) var count = 0
    private var logged = 0
    private var lastLog = -Double.infinity
    let interval: Double
    let listener: String

    public init(listener: String, interval: Double = 10) {
        self.listener = listener
        self.interval = interval
    }

    /// Closes `fd` (accepted from `peer`, not allowed), counts it, and logs when due.
    public func refuse(fd: Int32, peer: String, logger: Logger, now: Double = MonotonicClock.seconds()) {
        _ = close(fd)
        count += 1
        guard now - lastLog >= interval else { return }
        let since = count - logged
        logged = count
        lastLog = now
        logger.warning("closed \(since) connection\(since == 1 ? "" : "s") on the \(listener) socket from addresses outside server.allowed_peers (latest from \(peer); \(count) since start)")
    }
}
