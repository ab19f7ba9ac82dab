import KilnModel
import KilnPipeline
import KilnPOSIX

/// The source stage of a server with origins and a disk cache: each remote source is fetched once
/// for all the workers sharing the cache, and a download that breaks off is resumed.
///
/// Per remote source (`origin-a/cat.jpg`) the workers share, in the cache folder
/// (`SharedOriginFiles`): a version record (identity, `ETag`, `Last-Modified`, when it was last
/// checked, wall clock), the original under `CacheKey.original` (an ordinary entry, whatever
/// `cache.store` says: that is what lets one fetch serve every worker), and a fetch lock
/// (`DiskCache.lock(named:timeout:)`, the render locks' mechanism). A worker that finds the record checked
/// within `source.revalidate_after` trusts it without asking the origin; otherwise it takes the
/// lock and, holding it, reads the record again (another worker may just have fetched or
/// revalidated) before asking the origin itself: a GET when nothing is known, a conditional GET
/// (`If-None-Match` / `If-Modified-Since`) when a version is, the rest of a partial download
/// (`PartialDownload`) when one is kept. So N workers asking for a cold source cost one origin
/// request, and a revalidation one conditional request. The holder announces in the lock how long
/// it may take (two fetches), so the others keep waiting for a slow origin; a lock that cannot be
/// had (a read-only folder, a holder past its deadline) only costs the sharing: the worker asks
/// the origin itself.
///
/// A body that breaks off (a connection cut, a time-out) after some bytes of a 200 with a
/// validator is kept as a partial download; the request that saw it fails (502, or 504 for a
/// time-out), and the next attempt, in any worker, asks for `Range: bytes=N-` with `If-Range`: a
/// 206 continuing exactly there is appended, and the object becomes an entry only when complete
/// with the announced length; a 200 (the object changed) replaces it; a 206 that does not fit
/// (`PartialDownload.mismatch`) or a 416 drops it and the object is fetched whole.
///
/// With a shared result store (`store`, `cache.shared`), a source this host knows nothing of is
/// first looked for in the store (`SharedResultStore.original`), where another host of the fleet
/// left it: its bytes and version become this host's, trusted until `source.revalidate_after`
/// past the time its writer last checked it, then revalidated with a conditional request as
/// usual. Every whole download is handed to the store (written after the response), so a fleet
/// fetches each remote source from its origin once.
///
/// Local paths go to `local` (through `CachingSource` when `cache.store` keeps originals).
/// Without a disk cache there is none of this: each worker's `RemoteSource` remembers versions
/// itself. Not thread-safe (the disk cache is not): one per process, like the pipeline.
public final class SharedOriginSource: SourceLoading {
    public let router: SourceRouter
    public let local: any SourceLoading
    let disk: DiskCache
    let files: SharedOriginFiles
    /// Of the current `attempt`.
    var transfer = Transfer()
    /// Seconds to wait for a fetch lock whose holder announced no deadline (`cache.lock_timeout`).
    let lockTimeout: Double
    /// Wall clock, milliseconds since the epoch.
    let now: () -> Int64
    /// Where the fleet keeps remote originals (`cache.shared`); nil: none.
    let store: (any SharedCaching)?

    public init(router: SourceRouter, local: any SourceLoading, disk: DiskCache, lockTimeout: Double = 10,
                store: (any SharedCaching)? = nil, now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds) {
        self.router = router
        self.local = local
        self.disk = disk
        self.store = store
        self.files = SharedOriginFiles(path: disk.path)
        self.lockTimeout = lockTimeout
        self.now = now
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        try open(path).identity
    }

    public func isLocal(_ path: String) -> Bool { router.isLocal(path) }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        guard let (remote, rest) = router.route(path) else { return try local.open(path) }
        let id = SharedOriginFiles.id(path)
        if let known = files.version(id, sourcePath: path), isFresh(known, remote) {
            return SharedRemoteObject(owner: self, remote: remote, rest: rest, path: path, identity: known.identity, body: nil)
        }
        try remote.checkRemembered(rest)
        try checkShared(remote, path, id)
        let (version, body) = try exclusively(id, remote) { () throws(LoadError) -> (SharedVersion, [UInt8]?) in
            let known = files.version(id, sourcePath: path)
            if let known, isFresh(known, remote) { return (known, nil) }
            return try attempt(remote, rest, path, id) { () throws(LoadError) -> (SharedVersion, [UInt8]?) in
                try refresh(remote, rest, path, id, known: known)
            }
        }
        return SharedRemoteObject(owner: self, remote: remote, rest: rest, path: path, identity: version.identity, body: body)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        let opened = try open(path)
        return SourceImage(path: path, data: try opened.readAll(), identity: opened.identity)
    }

    /// The bytes of `path` at `identity`: the stored original, else downloaded (once for all).
    func bytes(_ remote: RemoteSource, _ rest: String, _ path: String, _ identity: SourceIdentity) throws(LoadError) -> [UInt8] {
        let key = CacheKey.original(sourcePath: path, identity: identity)
        if let data = original(key) { return data }
        try remote.checkRemembered(rest)
        let id = SharedOriginFiles.id(path)
        try checkShared(remote, path, id)
        return try exclusively(id, remote) { () throws(LoadError) -> [UInt8] in
            if let data = original(key) { return data }
            return try attempt(remote, rest, path, id) { () throws(LoadError) -> [UInt8] in
                try download(remote, rest, path, id).body
            }
        }
    }

    func isFresh(_ version: SharedVersion, _ remote: RemoteSource) -> Bool {
        let age = now() - version.checkedAt
        return age >= 0 && Double(age) < remote.revalidateAfter * 1000
    }

    private func original(_ key: CacheKey) -> [UInt8]? {
        if case .image(let entry)? = disk.entry(for: key) { return entry.data }
        return nil
    }

    /// Throws the failure every worker remembers for `path` while it is fresh, unless it still
    /// allows a resume of the partial download kept (which `attempt` then takes).
    private func checkShared(_ remote: RemoteSource, _ path: String, _ id: String) throws(LoadError) {
        guard remote.negativeTTL > 0, let failure = files.failure(id, sourcePath: path), failure.until > now(),
              failure.resumes == 0 else { return }
        throw failure.error
    }

    /// Asks the origin with `body` (holding the fetch lock), unless a worker remembers a failure
    /// for `path` (`source.negative_ttl`): then that failure is the answer, but for the one resume
    /// of a kept partial download it allows, which this attempt takes. A failure of `body` that
    /// the origin caused (an error status, a broken or unprovable transfer, a time-out; not our
    /// own limits) is remembered for every worker, allowing one resume when it left a partial
    /// download and this attempt was not already one.
    private func attempt<T>(_ remote: RemoteSource, _ rest: String, _ path: String, _ id: String,
                            _ body: () throws(LoadError) -> T) throws(LoadError) -> T {
        let ttl = remote.negativeTTL
        if ttl > 0, var failure = files.failure(id, sourcePath: path), failure.until > now() {
            guard failure.resumes > 0, files.partial(id) != nil else { throw failure.error }
            failure.resumes = 0
            files.write(failure, id, sourcePath: path)
        }
        transfer = Transfer()
        do {
            let result = try body()
            files.removeFailure(id)
            return result
        } catch {
            if ttl > 0 && (transfer.broken || remote.remembers(rest)) {
                let resumes = transfer.broken && !transfer.resumed && files.partial(id) != nil ? 1 : 0
                files.write(SharedFailure(error: error, until: now() + Int64(ttl * 1000), resumes: resumes), id, sourcePath: path)
            }
            throw error
        }
    }

    /// What the current `attempt` did: resumed a partial download, saw a transfer break off.
    struct Transfer {
        var resumed = false
        var broken = false
    }

    /// Runs `body` holding the fetch lock `id`, or without it when it cannot be had.
    private func exclusively<T>(_ id: String, _ remote: RemoteSource, _ body: () throws(LoadError) -> T) throws(LoadError) -> T {
        switch disk.lock(named: id, timeout: lockTimeout) {
        case .acquired(let lock, _):
            defer { lock.release() }
            // At most two GETs (a resume that starts over), each within source.fetch_timeout.
            lock.announce(until: now() + Int64((2 * remote.fetcher.timeout + 1) * 1000))
            return try body()
        case .timedOut, .unavailable:
            return try body()
        }
    }

    /// Asks the origin about `path` (holding its lock): conditionally when a version is known and
    /// no partial download waits, else for the whole object.
    private func refresh(_ remote: RemoteSource, _ rest: String, _ path: String, _ id: String,
                         known: SharedVersion?) throws(LoadError) -> (SharedVersion, [UInt8]?) {
        // Known from the shared store: its bytes, trusted or revalidated like a version of ours.
        var known = known
        var storedBody: [UInt8]?
        if known == nil, files.partial(id) == nil, let stored = fromStore(path, id) {
            if isFresh(stored.version, remote) { return stored }
            (known, storedBody) = (stored.version, stored.body)
        }
        guard let known, files.partial(id) == nil else {
            let (version, body) = try download(remote, rest, path, id)
            return (version, body)
        }
        let response: HTTPFetcher.Response
        do {
            response = try remote.request(rest, headers: RemoteSource.conditions(etag: known.etag, lastModified: known.lastModified))
        } catch {
            throw failed(error, remote, rest, id)
        }
        if response.status == 304 {
            var checked = known
            checked.checkedAt = now()
            files.write(checked, id, sourcePath: path)
            return (checked, storedBody)
        }
        let (version, body) = try complete(response, remote, rest, path, id)
        return (version, body)
    }
}
