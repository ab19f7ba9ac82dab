/// A request that did not carry the peer secret: 403 (`ErrorMapping`), nothing rendered.
public enum PeerAccessError: Error, Equatable, Sendable, CustomStringConvertible {
    case missingSecret
    case wrongSecret

    /// The FastCGI param that carries `server.peer_secret`.
    public static let secretParam = "KILN_PEER_SECRET"

    public var description: String {
        switch self {
        case .missingSecret: "refused: the FastCGI peer sent no \(PeerAccessError.secretParam) param (server.peer_secret is set)"
        case .wrongSecret: "refused: the FastCGI peer's \(PeerAccessError.secretParam) does not match server.peer_secret"
        }
    }
}

