import KilnHTTP
import KilnModel
import KilnPipeline

/// `POST /_kiln/purge?source=<percent-encoded path>` (or `?all=1`) on the status socket: how
/// `kiln cache purge --source` on one host reaches every other host of the fleet (`purge.hosts`),
/// and its own host's server (with `disk=<its folder>`, refused when the server's differs), so the
/// server logs every purge as one line.
/// The master removes the source's entries from its disk cache (`DiskCache.purge(sourcePath:)`),
/// which appends the source to the purge journal, so each worker drops it from its memory when
/// its next request begins. `server.allowed_peers` and `server.peer_secret` were checked before
/// (`answer`), as for every page of the status socket.
///
/// The purge reads the header of every entry, in the master's loop: about as long as
/// `kiln cache purge --source` on the host (tenths of a second for tens of thousands of entries);
/// the workers go on answering meanwhile.
extension Master {
    static let purgePath = "/_kiln/purge"

    /// The answer to a request for `/_kiln/purge`: 405 unless POST; 400 for a missing or hostile
    /// path; 409 without a disk cache; else 200 and one line saying what was removed.
    func purgeResponse(for request: HTTPRequest) -> HTTPResponse {
        guard request.method == "POST" else {
            return Master.textResponse(405, "method \(request.method) not allowed on \(Master.purgePath); use POST", extra: [(HeaderName.allow, "POST")])
        }
        let query = request.uri.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        let pairs = query.split(separator: "&")
        let everything = pairs.contains("all=1")
        var sourcePath = ""
        if !everything {
            switch Master.purgeSource(query: query) {
            case .success(let path): sourcePath = path
            case .failure(let refusal): return Master.textResponse(400, refusal.message)
            }
        }
        let front = (try? PurgeConfiguration(values)).map(\.nginxCache).flatMap { $0.isEmpty ? nil : NginxFrontCache(path: $0) }
        let caching = try? CacheConfiguration(values)
        let disk = caching.flatMap { DiskCache($0, logger: logger) }
        guard disk != nil || front != nil else {
            return Master.textResponse(409, "no disk cache on this host (cache.disk_path is empty) and no purge.nginx_cache: nothing to purge")
        }
        // `kiln cache purge` on this host names its folder: another server's is not this one's to purge.
        if let raw = pairs.first(where: { $0.hasPrefix("disk=") })?.dropFirst("disk=".count),
           (try? PathDecoding.decodeSegment(raw)) != disk?.path {
            return Master.textResponse(409, "this server's disk cache is \(disk?.path ?? "off"), not the one named")
        }
        let removed = everything ? disk?.purgeAll() : disk?.purge(sourcePath: sourcePath)
        let fronted = everything ? front?.purgeAll() : front?.purge(tag: SourceTag(sourcePath: sourcePath))
        let what = everything ? "every entry" : sourcePath
        let frontText = Master.frontPurgeText(fronted, path: front?.path)
        logger.notice("purge of \(what): removed \(removed?.entries ?? 0) disk cache entries (\(removed?.bytes ?? 0) bytes)\(frontText); every worker drops \(everything ? "its memory cache" : "it from memory") at its next request")
        return Master.textResponse(200, "purged \(removed?.entries ?? 0) entries (\(removed?.bytes ?? 0) bytes) of \(everything ? "everything" : sourcePath)\(frontText)")
    }

    /// `, N answers (B bytes) from nginx's front cache <path>` (and how many files it could not
    /// read or remove); empty without a front cache.
    static func frontPurgeText(_ removal: NginxFrontCache.Removal?, path: String?) -> String {
        guard let removal, let path else { return "" }
        let failed = removal.failed > 0 ? ", \(removal.failed) files it could not read or remove (run kiln as nginx's user)" : ""
        return "; \(removal.files) answers (\(removal.bytes) bytes) from nginx's front cache \(path)\(failed)"
    }

    struct PurgeRefusal: Error, Equatable {
        var message: String
    }

    /// The source path of a purge's query (`source=<percent-encoded path>`), checked as the paths
    /// of image URLs are: decoded, no NUL, no `.` or `..` segment, no backslash, valid UTF-8; empty
    /// segments (a leading `/`) are dropped. One-line reasons.
    static func purgeSource(query: Substring) -> Result<String, PurgeRefusal> {
        let values = query.split(separator: "&").filter { $0.hasPrefix("source=") }
        guard values.count == 1, let raw = values.first?.dropFirst("source=".count), !raw.isEmpty else {
            return .failure(PurgeRefusal(message: "give the source once: \(purgePath)?source=<percent-encoded path relative to the root>"))
        }
        guard raw.utf8.count <= 8192 else { return .failure(PurgeRefusal(message: "the source path is longer than 8192 bytes")) }
        let decoded: String
        do throws(SpecError) {
            decoded = try PathDecoding.decodeSegment(raw)
        } catch {
            return .failure(PurgeRefusal(message: "bad source path: \(error)"))
        }
        var parts: [Substring] = []
        for segment in decoded.split(separator: "/", omittingEmptySubsequences: true) {
            guard segment != "." && segment != ".." else {
                return .failure(PurgeRefusal(message: "'.' and '..' are not allowed in the source path"))
            }
            guard !segment.contains("\\"), !segment.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return .failure(PurgeRefusal(message: "backslash or control character in the source path"))
            }
            parts.append(segment)
        }
        guard !parts.isEmpty else { return .failure(PurgeRefusal(message: "the source path is empty")) }
        return .success(parts.joined(separator: "/"))
    }
}
