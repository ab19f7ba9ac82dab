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
///
/// - Adapted (`adapters.*`, `URLAdapter`): a foreign URL (`/_next/image?url=…`) that a client
///   sent, translated into native options and parsed like an unsigned native URL (never trusted:
///   a trusted rewrite is parsed as rewritten, and no adapter reads it), refused (403) while URLs
///   must be signed unless `adapters.allow_unsigned`.
///
/// A request that is neither trusted nor signed then meets the size and quality allow-lists
/// (`limits.allowed_*`, `VariantAllowList`): refused, or snapped in the request itself, before
/// the pipeline derives its cache key.
public struct RequestGate: Sendable {
    public var signature: URLSignature
    public var policy: OptionPolicy
    public var allowList: VariantAllowList
    public var parser: SpecParser
    public var adapters: URLAdapters

    public init(signature: URLSignature = URLSignature(), policy: OptionPolicy = OptionPolicy(),
                allowList: VariantAllowList = VariantAllowList(), adapters: URLAdapters = URLAdapters(), parser: SpecParser) {
        self.signature = signature
        self.policy = policy
        self.allowList = allowList
        self.adapters = adapters
        self.parser = parser
    }

    public init(security: SecurityConfiguration, allowLists: AllowListConfiguration = AllowListConfiguration(),
                adapters: URLAdapters = URLAdapters(), parser: SpecParser) {
        self.init(signature: security.urlSignature, policy: security.optionPolicy, allowList: allowLists.allowList,
                  adapters: adapters, parser: parser)
    }

    /// How a request got in: nginx's trusted rewrite, a verified signature, or neither.
    public enum Provenance: Sendable, Equatable {
        case trusted, signed, unsigned
    }

    /// The parsed request, or `SignatureError` / `PolicyError` (403) / `SpecError`.
    public func imageRequest(for request: HTTPRequest) throws -> ImageRequest {
        try admit(request).request
    }

    /// What got in: the parsed request, how, and where a failed render sends the client.
    public struct Admission: Sendable {
        public var request: ImageRequest
        public var provenance: Provenance
        /// An adapted URL's `302` target for a failed render (Cloudflare's `onerror=redirect`).
        public var onErrorRedirect: String?
    }

    /// The parsed request and how it got in (`http.immutable = signed` needs to know).
    public func admit(_ request: HTTPRequest, hints: (any DeviceHintResolving)? = nil) throws -> (request: ImageRequest, provenance: Provenance) {
        let admitted = try admission(request, hints: hints)
        return (admitted.request, admitted.provenance)
    }

    /// The parsed request, how it got in, and an adapted URL's redirect for failures. `hints`:
    /// the request's Client Hints and Save-Data (`ClientHints`), resolved while the URL is parsed,
    /// so the request that comes out (and its cache key) holds the device's width, DPR, quality.
    public func admission(_ request: HTTPRequest, hints: (any DeviceHintResolving)? = nil) throws -> Admission {
        guard request.pathIsUTF8 else { throw SpecError.notUTF8 }
        if request.isTrusted {
            // nginx's own rewrite, answered as rewritten (`DOCUMENT_URI`) with its query ignored:
            // adapters read only what a client sent, and an adapted URL is never trusted.
            let (path, decoded) = request.specPath
            return Admission(request: try parser.parse(path, isDecoded: decoded, hints: hints), provenance: .trusted)
        }
        if !adapters.isEmpty {
            // Before an adapter reads the query: a 64 KB URL costs a length comparison.
            guard request.uri.utf8.count <= parser.maxPathBytes else {
                throw SpecError.malformedPath(reason: "URL too long: \(request.uri.utf8.count) bytes, at most \(parser.maxPathBytes)")
            }
            if let adapted = try adapters.adapt(request) {
                let (parsed, provenance) = try admit(adapted, hints: hints)
                return Admission(request: parsed, provenance: provenance, onErrorRedirect: adapted.onErrorRedirect)
            }
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
        let imageRequest = try parser.parse(parsed, isDecoded: decoded, hints: hints)
        if verified.kind == .signed { return Admission(request: imageRequest, provenance: .signed) }
        return Admission(request: try allowList.apply(to: imageRequest), provenance: .unsigned)
    }

    /// An adapted URL: with its scheme's signature verified, its native path parsed as a signed
    /// URL (no option policy, no allow-lists); otherwise as an unsigned URL (option policy, then
    /// the allow-lists), or refused while URLs must be signed (here, or by the adapter's own key).
    /// Never trusted: trust is nginx's rewrite of a native path, which no adapter reads.
    func admit(_ adapted: AdaptedURL, hints: (any DeviceHintResolving)?) throws -> (request: ImageRequest, provenance: Provenance) {
        let path = adapted.nativePath
        switch adapted.signing {
        case .verified:
            return (try parser.parse(path, isDecoded: true, hints: hints), .signed)
        case .unsignedWhileKeyed:
            guard adapters.allowUnsigned else {
                throw RequestRefusal.adapterNeedsSignature(
                    "\(adapted.adapter) URLs must be signed here (this server has their key); set adapters.allow_unsigned = true to accept unsigned ones")
            }
        case .unsigned:
            guard signature.allowUnsigned || adapters.allowUnsigned else {
                throw RequestRefusal.adapterNeedsSignature(
                    "\(adapted.adapter) URLs carry no signature and URLs must be signed here; set adapters.allow_unsigned = true to accept them")
            }
        }
        try parser.check(policy, path: path, isDecoded: true)
        return (try allowList.apply(to: try parser.parse(path, isDecoded: true, hints: hints)), .unsigned)
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
