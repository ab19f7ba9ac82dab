import KilnCore
import KilnSystem
import Synchronization

/// Loads sources from one remote origin (`source.origins`) over HTTP(S), with `HTTPFetcher`
/// (libcurl) and the SSRF guard (`OriginAddressPolicy`): every connection's address is checked
/// after DNS and after each redirect.
///
/// A source's version (its `SourceIdentity`: size, `Last-Modified`, `ETag`) is what the cache
/// keys use, so it must be known without downloading the object each time: the first `open` GETs
/// it (and keeps the bytes for the render that may follow), and for `source.revalidate_after`
/// the worker trusts that version without asking; then it revalidates with `If-None-Match` (or
/// `If-Modified-Since`), and a 304 keeps the version. So a variant in the caches costs no origin
/// request within the window and one small conditional request after it. Reading the bytes of a
/// version learned earlier (a cache miss) GETs them, unless `CachingSource` has the original
/// (`cache.store = original|both`).
///
/// Origin answers map to `LoadError`: 404 and 410 → not found; other statuses, refused or broken
/// connections, redirect loops → `.upstream` (502); time-outs → `.upstreamTimeout` (504); a body
/// over `limits.max_file_bytes` → too large (413).
public final class RemoteSource: SourceLoading, Sendable {
    public let origin: Origin
    let fetcher: HTTPFetcher
    let policy: OriginAddressPolicy
    let revalidateAfter: Double
    /// S3 origins: signs each GET (SigV4 headers added to the request).
    let signer: S3RequestSigner?
    private let versions = Mutex<[String: Version]>([:])
    /// Most versions remembered per worker (the oldest checked goes first).
    static let maxVersions = 10_000

    struct Version: Sendable {
        var identity: SourceIdentity
        var etag: String?
        var lastModified: String?
        var checkedAt: Double
    }

    public init(origin: Origin, fetcher: HTTPFetcher, policy: OriginAddressPolicy, revalidateAfter: Double,
                signer: S3RequestSigner? = nil) {
        self.origin = origin
        self.fetcher = fetcher
        self.policy = policy
        self.revalidateAfter = revalidateAfter
        self.signer = signer
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        try open(path).identity
    }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        let now = MonotonicClock.seconds()
        let known = versions.withLock { $0[path] }
        if let known, now - known.checkedAt < revalidateAfter {
            return RemoteObject(source: self, path: path, identity: known.identity, body: nil)
        }
        let response = try fetch(path, revalidating: known)
        if response.status == 304, var known {
            known.checkedAt = now
            remember(path, known)
            return RemoteObject(source: self, path: path, identity: known.identity, body: nil)
        }
        let version = try accept(response, path: path, checkedAt: now)
        remember(path, version)
        return RemoteObject(source: self, path: path, identity: version.identity, body: response.body)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        let opened = try open(path)
        return SourceImage(path: path, data: try opened.readAll(), identity: opened.identity)
    }

    /// The bytes of `path` (a GET without conditions), for a version learned earlier.
    func download(_ path: String) throws(LoadError) -> [UInt8] {
        let response = try fetch(path, revalidating: nil)
        let version = try accept(response, path: path, checkedAt: MonotonicClock.seconds())
        remember(path, version)
        return response.body
    }

    private func fetch(_ path: String, revalidating known: Version?) throws(LoadError) -> HTTPFetcher.Response {
        let url = origin.url(for: path)
        do {
            var conditions: [(name: String, value: String)] = []
            if let etag = known?.etag {
                conditions.append(("If-None-Match", etag))
            } else if let modified = known?.lastModified {
                conditions.append(("If-Modified-Since", modified))
            }
            if let signer { conditions += signer.headers(get: url, at: WallClock.seconds()) ?? [] }
            return try fetcher.get(url, headers: conditions, checkAddress: { [policy] in policy.refusal(for: $0) })
        } catch {
            let name = origin.name
            switch error {
            case let .refused(why): throw .upstream("origin \(name): \(why) (source.allowed_networks)")
            case let .tooLarge(why): throw .tooLarge("origin \(name): source is \(why), over limits.max_file_bytes")
            case let .timeout(why): throw .upstreamTimeout("origin \(name) did not answer within source.fetch_timeout: \(why)")
            case let .redirects(why): throw .upstream("origin \(name): \(why)")
            case let .unavailable(why): throw .io("origin \(name): \(why)")
            case let .transport(why): throw .upstream("origin \(name): \(why)")
            }
        }
    }

    /// The version a 200 describes; other statuses are errors.
    private func accept(_ response: HTTPFetcher.Response, path: String, checkedAt: Double) throws(LoadError) -> Version {
        switch response.status {
        case 200: break
        case 404, 410: throw .notFound("no source at \(origin.name)/\(path) (origin answered \(response.status))")
        default:
            let code = signer == nil ? nil : S3Access.errorCode(in: response.body)
            throw .upstream("origin \(origin.name) answered \(response.status)\(code.map { " (\($0))" } ?? "") for \(path)")
        }
        if let declared = response.contentLength, declared != response.body.count {
            throw .upstream("origin \(origin.name) sent \(response.body.count) of \(declared) bytes for \(path)")
        }
        let modified = response.lastModified.flatMap(HTTPDate.parse) ?? 0
        let identity = SourceIdentity(size: response.body.count, mtimeNanoseconds: modified * 1_000_000_000, inode: 0,
                                      validator: response.etag ?? "")
        return Version(identity: identity, etag: response.etag, lastModified: response.lastModified, checkedAt: checkedAt)
    }

    private func remember(_ path: String, _ version: Version) {
        versions.withLock { known in
            if known[path] == nil && known.count >= RemoteSource.maxVersions,
               let oldest = known.min(by: { $0.value.checkedAt < $1.value.checkedAt })?.key {
                known[oldest] = nil
            }
            known[path] = version
        }
    }
}

/// One version of a remote source: its identity, and its bytes when the open fetched them.
final class RemoteObject: OpenedSource {
    let source: RemoteSource
    let path: String
    let identity: SourceIdentity
    private var body: [UInt8]?

    init(source: RemoteSource, path: String, identity: SourceIdentity, body: [UInt8]?) {
        self.source = source
        self.path = path
        self.identity = identity
        self.body = body
    }

    func readAll() throws(LoadError) -> [UInt8] {
        if let body { return body }
        let fetched = try source.download(path)
        body = fetched
        return fetched
    }
}
