import KilnModel
import KilnPipeline
import KilnPOSIX

/// The transfers of `SharedOriginSource`: a whole download, a resumed one, the answer kept as the
/// fleet's original, an original taken from the shared store, and a failure remembered.
extension SharedOriginSource {
    /// The whole object, resuming a partial download when one is kept.
    func download(_ remote: RemoteSource, _ rest: String, _ path: String,
                          _ id: String) throws(LoadError) -> (version: SharedVersion, body: [UInt8]) {
        if let (partial, kept) = files.partial(id) {
            if partial.url == remote.origin.url(for: rest),
               let done = try resume(partial, kept, remote, rest, path, id) { return done }
            files.removePartial(id)
        }
        let response: HTTPFetcher.Response
        do {
            response = try remote.request(rest, headers: [])
        } catch {
            throw failed(error, remote, rest, id)
        }
        return try complete(response, remote, rest, path, id)
    }

    /// Asks for the rest of `partial`; nil when the answer does not continue it (start over).
    func resume(_ partial: PartialDownload, _ kept: [UInt8], _ remote: RemoteSource, _ rest: String,
                        _ path: String, _ id: String) throws(LoadError) -> (version: SharedVersion, body: [UInt8])? {
        let response: HTTPFetcher.Response
        transfer.resumed = true
        do {
            response = try remote.request(rest, headers: partial.resumeHeaders)
        } catch {
            if case let .interrupted(cut, _, _) = error, cut.status == 206 {
                transfer.broken = true
                // Broke off again: keep what continues the download, drop what does not.
                if partial.mismatch(cut, interrupted: true) == nil {
                    files.extendPartial(partial, with: cut.body, id)
                } else {
                    files.removePartial(id)
                }
                throw remote.loadError(error)
            }
            throw failed(error, remote, rest, id)
        }
        switch response.status {
        case 206:
            guard partial.mismatch(response, interrupted: false) == nil,
                  let total = response.contentRange.flatMap(HTTPFetcher.ContentRange.init)?.total,
                  let whole = partial.completes(kept, with: response.body, total: total) else { return nil }
            guard total <= remote.fetcher.maxBytes else {
                files.removePartial(id)
                throw remote.rememberFailure(remote.loadError(.tooLarge("\(total) bytes")), for: rest)
            }
            let full = HTTPFetcher.Response(status: 200, body: whole, etag: response.etag ?? partial.etag,
                                            lastModified: response.lastModified ?? partial.lastModified,
                                            contentLength: total, redirects: response.redirects)
            return try complete(full, remote, rest, path, id)
        case 416:
            return nil
        default:
            // 200: the object changed since (If-Range), or the origin ignores ranges. Other
            // statuses are the origin's answer about the object.
            files.removePartial(id)
            return try complete(response, remote, rest, path, id)
        }
    }

    /// A whole answer: its version (errors for statuses other than 200), stored as the original
    /// before the record names it, so a worker that reads the record finds the bytes.
    func complete(_ response: HTTPFetcher.Response, _ remote: RemoteSource, _ rest: String, _ path: String,
                          _ id: String) throws(LoadError) -> (version: SharedVersion, body: [UInt8]) {
        let accepted = try remote.accept(response, path: rest, checkedAt: 0)
        let version = SharedVersion(identity: accepted.identity, etag: accepted.etag, lastModified: accepted.lastModified,
                                    checkedAt: now())
        files.removePartial(id)
        let entry = CachedImage.original(response.body, sourceModified: version.identity.mtimeSeconds, sourcePath: path)
        disk.store(.image(entry), for: CacheKey.original(sourcePath: path, identity: version.identity))
        files.write(version, id, sourcePath: path)
        store?.enqueueOriginal(SharedOriginal(body: response.body, identity: version.identity, etag: version.etag,
                                              lastModified: version.lastModified, checkedAt: version.checkedAt), sourcePath: path)
        return (version, response.body)
    }

    /// The original another host left in the shared store, made this host's (the disk entry
    /// first, then the record that names it, as `complete` does); nil when the store has none.
    func fromStore(_ path: String, _ id: String) -> (version: SharedVersion, body: [UInt8])? {
        guard let stored = store?.original(sourcePath: path) else { return nil }
        let version = SharedVersion(identity: stored.identity, etag: stored.etag, lastModified: stored.lastModified,
                                    checkedAt: min(stored.checkedAt, now()))
        let entry = CachedImage.original(stored.body, sourceModified: version.identity.mtimeSeconds, sourcePath: path)
        disk.store(.image(entry), for: CacheKey.original(sourcePath: path, identity: version.identity))
        files.write(version, id, sourcePath: path)
        return (version, stored.body)
    }

    /// The error of a failed GET (remembered for `source.negative_ttl` unless the body broke off),
    /// after keeping the bytes of a 200 that broke off.
    func failed(_ error: HTTPFetcher.Failure, _ remote: RemoteSource, _ rest: String, _ id: String) -> LoadError {
        if case let .interrupted(cut, _, _) = error {
            transfer.broken = true
            if let partial = PartialDownload(url: remote.origin.url(for: rest), interrupted: cut) {
                files.startPartial(partial, bytes: cut.body, id)
            } else {
                files.removePartial(id)
            }
        }
        return remote.remembering(error, for: rest, resumable: true)
    }
}
