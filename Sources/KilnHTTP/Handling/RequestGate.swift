import KilnPipeline
import KilnModel

/// Decides which path of a request is parsed, and whether it may be: trust, the URL signature,
/// the option allow-lists, then the parser.
///
/// - Trusted (nginx's `KILN_TRUSTED` param, an operator's internal rewrite): `DOCUMENT_URI` as
///   nginx rewrote it, no signature and no allow-lists.
/// - With signing keys: the signature is checked on the raw path (`REQUEST_URI` up to `?`, before
///   any percent-decoding or preset expansion), and exactly the raw remainder it covers is parsed
///   (decoded here, segment by segment), never nginx's decoded and normalised `DOCUMENT_URI`,
///   which the signature does not cover.
/// - Without keys: today's paths (`DOCUMENT_URI`), a leading `unsafe` segment removed.
public struct RequestGate: Sendable {
    public var signature: URLSignature
    public var policy: OptionPolicy
    public var parser: SpecParser

    public init(signature: URLSignature = URLSignature(), policy: OptionPolicy = OptionPolicy(), parser: SpecParser) {
        self.signature = signature
        self.policy = policy
        self.parser = parser
    }

    public init(security: SecurityConfiguration, parser: SpecParser) {
        self.init(signature: security.urlSignature, policy: security.optionPolicy, parser: parser)
    }

    /// How a request got in: nginx's trusted rewrite, a verified signature, or neither.
    public enum Provenance: Sendable, Equatable {
        case trusted, signed, unsigned
    }

    /// The parsed request, or `SignatureError` / `PolicyError` (403) / `SpecError`.
    public func imageRequest(for request: HTTPRequest) throws -> ImageRequest {
        try admit(request).request
    }

    /// The parsed request and how it got in (`http.immutable = signed` needs to know). `hints`:
    /// the request's Client Hints and Save-Data (`ClientHints`), resolved while the URL is parsed,
    /// so the request that comes out (and its cache key) holds the device's width, DPR, quality.
    public func admit(_ request: HTTPRequest, hints: (any DeviceHintResolving)? = nil) throws -> (request: ImageRequest, provenance: Provenance) {
        guard request.pathIsUTF8 else { throw SpecError.notUTF8 }
        if request.isTrusted {
            let (path, decoded) = request.specPath
            return (try parser.parse(path, isDecoded: decoded, hints: hints), .trusted)
        }
        let verified = try signature.verify(rawPath: request.rawPath)
        let path: String, decoded: Bool
        if signature.keys.isEmpty {
            (path, decoded) = request.specPath
        } else {
            (path, decoded) = (verified.path, false)
        }
        let parsed = signature.keys.isEmpty ? RequestGate.droppingUnsafe(path) : path
        try parser.check(policy, path: parsed, isDecoded: decoded)
        return (try parser.parse(parsed, isDecoded: decoded, hints: hints), verified.kind == .signed ? .signed : .unsigned)
    }

    /// `/unsafe/rest` to `/rest`; other paths unchanged.
    static func droppingUnsafe(_ path: String) -> String {
        let prefix = "/" + URLSignature.unsafeSegment
        guard path.hasPrefix(prefix) else { return path }
        let rest = path.dropFirst(prefix.count)
        guard rest.isEmpty || rest.first == "/" || rest.first == "?" else { return path }
        return String(rest)
    }
}
