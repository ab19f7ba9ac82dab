import KilnModel
import KilnPipeline
import KilnPOSIX
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
/// version learned earlier (a cache miss) GETs them. That is the behaviour without a disk cache,
/// per worker; with one, `SharedOriginSource` uses this type's `request` and `accept` to share
/// versions, originals and partial downloads between the workers (one fetch per source).
///
/// Origin answers map to `LoadError`: 404 and 410 → not found; other statuses, refused or broken
/// connections, redirect loops → `.upstream` (502); time-outs → `.upstreamTimeout` (504); a body
/// over `limits.max_file_bytes` → too large (413). These failures are remembered for
/// `source.negative_ttl` (per worker), so a burst of requests for a missing or broken object
/// costs the origin one request.
///
/// Every fetch first passes the origin's `OriginGate` (concurrency and rate across workers) and
/// is recorded in `OriginTraffic` (metrics, the `fetch` phase of `Server-Timing`).
public final class RemoteSource: SourceLoading, Sendable {
    public let origin: Origin
    let fetcher: HTTPFetcher
    let policy: OriginAddressPolicy
    let revalidateAfter: Double
    let gate: OriginGate?
    let traffic: OriginTraffic?
    let negativeTTL: Double
    /// `limits.render_timeout`: a fetch ends this long after its request began (less a margin
    /// for the render), so a slow origin is a 504, never a worker killed at its deadline. 0: none.
    let renderTimeout: Double
    /// S3 origins: signs each GET (SigV4 headers added to the request).
    let signer: S3RequestSigner?
    private let versions = Mutex<[String: Version]>([:])
    let failures = Mutex<[String: Failure]>([:])
    /// Most versions remembered per worker (the oldest checked goes first).
    static let maxVersions = 10_000

    struct Version: Sendable {
        var identity: SourceIdentity
        var etag: String?
        var lastModified: String?
        var checkedAt: Double
    }

    /// An origin failure remembered until `until` (monotonic seconds).
    struct Failure: Sendable {
        var error: LoadError
        var until: Double
    }

    public init(origin: Origin, fetcher: HTTPFetcher, policy: OriginAddressPolicy, revalidateAfter: Double,
                gate: OriginGate? = nil, traffic: OriginTraffic? = nil, negativeTTL: Double = 0, renderTimeout: Double = 0,
                signer: S3RequestSigner? = nil) {
        self.origin = origin
        self.fetcher = fetcher
        self.policy = policy
        self.revalidateAfter = revalidateAfter
        self.gate = gate
        self.traffic = traffic
        self.negativeTTL = negativeTTL
        self.renderTimeout = renderTimeout
        self.signer = signer
    }

    /// Seconds of the render deadline kept for decoding and encoding after a fetch.
    static let renderMargin = 0.5

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        try open(path).identity
    }

    public func isLocal(_ path: String) -> Bool { false }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        let now = MonotonicClock.seconds()
        let known = versions.withLock { $0[path] }
        if let known, now - known.checkedAt < revalidateAfter {
            return RemoteObject(source: self, path: path, identity: known.identity, body: nil)
        }
        try checkRemembered(path, now: now)
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
        try checkRemembered(path, now: MonotonicClock.seconds())
        let response = try fetch(path, revalidating: nil)
        let version = try accept(response, path: path, checkedAt: MonotonicClock.seconds())
        remember(path, version)
        return response.body
    }

    /// A GET of `path` for `open` and `download` (conditional when a version is known); a failure
    /// is mapped and remembered.
    private func fetch(_ path: String, revalidating known: Version?) throws(LoadError) -> HTTPFetcher.Response {
        do {
            return try request(path, headers: RemoteSource.conditions(etag: known?.etag, lastModified: known?.lastModified))
        } catch {
            throw remembering(error, for: path)
        }
    }

    /// The headers that make a GET conditional on a known version: `If-None-Match` with its ETag,
    /// else `If-Modified-Since` with its date; none when nothing is known.
    static func conditions(etag: String?, lastModified: String?) -> [(name: String, value: String)] {
        if let etag { return [("If-None-Match", etag)] }
        if let lastModified { return [("If-Modified-Since", lastModified)] }
        return []
    }

    /// One GET of `path` with extra `headers` (conditions, `Range`), the only way a request
    /// reaches the origin: within the request's render deadline, through the origin's gate (the
    /// wait counts against the fetch time-out), recorded in `traffic`. `SharedOriginSource` keeps
    /// the bytes of an `.interrupted` body.
    func request(_ path: String, headers: [(name: String, value: String)]) throws(HTTPFetcher.Failure) -> HTTPFetcher.Response {
        let started = MonotonicClock.seconds()
        var fetcher = self.fetcher
        if renderTimeout > 0, let requestStart = traffic?.requestStart {
            let left = requestStart + renderTimeout - RemoteSource.renderMargin - started
            guard left > 0.01 else {
                record(.timeout, bytes: 0, since: started, waited: 0)
                throw .notStarted("no time left within limits.render_timeout for the fetch")
            }
            fetcher.timeout = min(fetcher.timeout, left)
        }
        var permit: OriginGate.Permit?
        var worker: OriginGate.Permit?
        defer {
            permit?.release()
            worker?.release()
        }
        if let gate {
            // A slot that comes with almost none of the fetch time left would start a fetch that
            // cannot finish: that fetch found no (useful) slot, and says so.
            let useful = RemoteSource.minimumFetchTime(fetcher.timeout)
            // First a worker slot (given up at once when all are taken: this worker is then free
            // for local sources), then the origin's own slot and token.
            worker = gate.enterWorker(until: started + fetcher.timeout - useful)
            guard worker != nil else {
                record(.limited, bytes: 0, since: started, waited: MonotonicClock.seconds() - started)
                throw .busy("every worker allowed to fetch is fetching (source.fetch_workers_max \(gate.limits.fetchWorkers)); retry shortly")
            }
            let entered = gate.enter(until: started + fetcher.timeout - useful)
            guard let entered else {
                record(.limited, bytes: 0, since: started, waited: MonotonicClock.seconds() - started)
                throw .notStarted("no fetch slot within source.fetch_timeout "
                                  + "(source.origin_concurrency \(gate.limits.concurrency), source.origin_rate \(gate.limits.rate))")
            }
            permit = entered
            fetcher.timeout = max(0.001, fetcher.timeout - (MonotonicClock.seconds() - started))
        }
        let waited = permit.map { _ in MonotonicClock.seconds() - started } ?? 0
        let response: HTTPFetcher.Response
        do {
            let url = origin.url(for: path)
            // S3: the SigV4 headers (the clock read now, after any wait for the gate).
            let sent = signer.map { headers + ($0.headers(get: url, at: WallClock.seconds()) ?? []) } ?? headers
            response = try fetcher.get(url, headers: sent, checkAddress: { [policy] in policy.refusal(for: $0) })
        } catch {
            switch error {
            case .timeout: record(.timeout, bytes: 0, since: started, waited: waited)
            case .tooLarge: record(.tooLarge, bytes: 0, since: started, waited: waited)
            case let .interrupted(partial, _, timedOut):
                record(timedOut ? .timeout : .error, bytes: partial.body.count, since: started, waited: waited)
            default: record(.error, bytes: 0, since: started, waited: waited)
            }
            throw error
        }
        let outcome: OriginFetch.Outcome
        switch response.status {
        case 200, 206: outcome = .ok
        case 304: outcome = .notModified
        case 404, 410: outcome = .notFound
        default: outcome = .error
        }
        record(outcome, bytes: response.body.count, since: started, waited: waited,
               resumed: response.status == 206 && headers.contains { $0.name == "Range" })
        return response
    }

    /// The least of a fetch's time-out worth starting a fetch with after waiting for the origin's
    /// gate: a tenth of it, at least 50 ms.
    static func minimumFetchTime(_ timeout: Double) -> Double {
        min(timeout, max(0.05, 0.1 * timeout))
    }

    /// The version a 200 describes; other statuses are errors (remembered).
    func accept(_ response: HTTPFetcher.Response, path: String, checkedAt: Double) throws(LoadError) -> Version {
        switch response.status {
        case 200: break
        case 404, 410:
            throw rememberFailure(.notFound("no source at \(origin.name)/\(path) (origin answered \(response.status))"), for: path)
        default:
            let code = signer == nil ? nil : S3Access.errorCode(in: response.body)
            throw rememberFailure(.upstream("origin \(origin.name) answered \(response.status)\(code.map { " (\($0))" } ?? "") for \(path)"),
                                  for: path)
        }
        if let declared = response.contentLength, declared != response.body.count {
            throw rememberFailure(.upstream("origin \(origin.name) sent \(response.body.count) of \(declared) bytes for \(path)"), for: path)
        }
        // A body that ended when the connection closed may have been cut: only the format's own
        // structure can show it is whole.
        if !response.delimited, case let .unproven(why) = ImageCompleteness.check(response.body) {
            throw rememberFailure(.upstream("origin \(origin.name) sent \(response.body.count) bytes for \(path) without "
                                            + "Content-Length or chunked encoding, and they are not a whole image: \(why)"), for: path)
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
