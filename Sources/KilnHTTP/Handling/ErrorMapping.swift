import KilnPipeline
import KilnModel

/// The one place where errors become an HTTP status and a public one-line reason: every error,
/// fresh or remembered by the caches, goes through `PipelineFailure` (the pipeline's domain
/// failure), whose kind picks the status here. A 500 never carries library text: the client gets
/// the failure's fixed sentence, the log gets `detail`.
public enum ErrorMapping {
    public struct Mapped: Equatable, Sendable {
        public var status: Int
        /// Sent to the client.
        public var message: String
        /// For the log: the message, or the library detail of an internal failure.
        public var logMessage: String
        /// `X-Cache` of a failure that went through the caches.
        public var outcome: CacheOutcome?
    }

    public static func map(_ error: any Error) -> Mapped {
        switch error {
        case let refused as PeerAccessError:
            return map(refused)
        case let refused as RequestRefusal:
            return Mapped(status: status(of: refused), message: refused.message, logMessage: refused.message, outcome: nil)
        case let refused as AdapterError where refused.isBadSignature:
            return Mapped(status: 403, message: refused.message, logMessage: refused.message, outcome: nil)
        case let refused as AdapterError:
            return map(RequestRefusal.badAdaptedURL(refused.message))
        case let refused as SignatureError:
            return Mapped(status: 403, message: refused.message, logMessage: refused.message, outcome: nil)
        default:
            break
        }
        let failure = PipelineFailure(error)
        return Mapped(status: status(of: failure.kind), message: failure.message,
                      logMessage: failure.detail ?? failure.message, outcome: failure.outcome)
    }

    /// A request without the peer secret (`server.peer_secret`): 403, the one-line reason.
    public static func map(_ error: PeerAccessError) -> Mapped {
        Mapped(status: 403, message: error.description, logMessage: error.description, outcome: nil)
    }

    /// The HTTP status of a failure kind.
    public static func status(of kind: PipelineFailure.Kind) -> Int {
        switch kind {
        case .invalidRequest: 400
        case .forbidden: 403
        case .notFound: 404
        case .tooLarge: 413
        case .unsupported: 415
        case .corrupt: 422
        case .internal: 500
        // nginx's own code for a request its client closed; nobody is there to read it.
        case .cancelled: 499
        // A remote origin (`source.origins`) failed or was too slow.
        case .sourceUnavailable: 502
        case .sourceTimedOut: 504
        // Kiln's own capacity (source.fetch_workers_max), like the master's overload answer:
        // 503 with `Retry-After`.
        case .busy: 503
        // A lookup lane's hand-off reaches a client only when nginx has no render location for it.
        case .renderElsewhere: 503
        }
    }

    /// The HTTP status of one of the HTTP layer's own refusals.
    public static func status(of refusal: RequestRefusal) -> Int {
        switch refusal {
        // 410, not 403: the link was valid once and will never be again. Clients, caches and
        // CDNs can tell an expired link (ask the page for a fresh one) from a forged one (403).
        case .expired: 410
        case .adapterNeedsSignature: 403
        case .badAdaptedURL: 400
        }
    }
}
