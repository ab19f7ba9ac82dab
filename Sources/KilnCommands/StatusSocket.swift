import KilnFastCGI
import KilnServer

/// A master's status socket as the commands reach it: `kiln reload`, `kiln cache stats` (the
/// shared tier's counters) and `kiln cache purge` (the local server, and every host of
/// `purge.hosts`). The local one's address comes from the same settings as `kiln serve`'s
/// (`server.status_listen`, derived from `server.listen`), with the peer secret it asks for.
struct StatusSocket {
    let address: ListenAddress
    let secret: String

    /// The local master's; nil when the settings name none (`status_listen = off`).
    init?(_ server: ServerConfiguration) {
        guard let address = server.statusAddress else { return nil }
        self.init(address, secret: (try? server.resolvedPeerSecret()) ?? "")
    }

    init(_ address: ListenAddress, secret: String) {
        self.address = address
        self.secret = secret
    }

    /// One FastCGI request, with `KILN_PEER_SECRET` when there is a secret.
    func request(_ method: String, _ uri: String, timeout: Double) throws(FastCGIClient.Failure) -> FastCGIClient.Response {
        let target: FastCGIClient.Address = switch address {
        case let .unix(path): .unix(path: path)
        case let .tcp(host, port): .tcp(host: host, port: port)
        }
        return try FastCGIClient(target, timeout: timeout)
            .request(method, uri, params: secret.isEmpty ? [] : [(PeerAccess.secretParam, secret)])
    }
}
