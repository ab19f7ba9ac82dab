/// The HTTP layer's own refusals, decided before the pipeline is asked (the pipeline's failures
/// are `PipelineFailure`s): `ErrorMapping` gives each its status.
public enum RequestRefusal: Error, Equatable, Sendable {
    /// The URL carried an expiry (`exp:`) that has passed: it was valid once (410). Decided before
    /// the caches are asked, never remembered.
    case expired(String)
    /// An adapted URL (`adapters.*`) while URLs must be signed and `adapters.allow_unsigned` is
    /// off (403).
    case adapterNeedsSignature(String)
    /// A foreign URL its adapter cannot translate: an unknown or unsupported parameter, a source
    /// that is no local path or configured origin (400).
    case badAdaptedURL(String)

    /// The one-line reason sent to the client.
    public var message: String {
        switch self {
        case .expired(let m), .adapterNeedsSignature(let m), .badAdaptedURL(let m): m
        }
    }
}
