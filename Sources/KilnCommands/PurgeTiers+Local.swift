import KilnFastCGI
import KilnModel
import KilnPipeline
import KilnServer

/// The local disk tier of a purge. When this host's server is running (its master answers on
/// `server.status_listen`) and uses the same disk cache, the purge goes through it
/// (`POST /_kiln/purge?source=…&disk=…`), so the server's log has one line for it, as for a
/// peer's purge; otherwise (no server, another server's folder) the command purges the folder
/// itself. Either way the entries go and the purge journal tells every worker to drop the
/// source from memory at its next request, entries on disk or not. The server's master also
/// purges nginx's front cache (`purge.nginx_cache`) and says so in its line; without a server,
/// the command purges it itself (`purgeFront`).
extension PurgeTiers {
    /// The local disk's outcome, and whether the local server made the purge (and with it the
    /// front cache's).
    func purgeLocalDisk(_ sourcePath: String) -> (outcome: Outcome, throughServer: Bool)? {
        guard let disk = DiskCache(configuration.cache, logger: logger) else { return nil }
        if let server = purgeThroughLocalServer(sourcePath, diskPath: disk.path) {
            return (diskOutcome(entries: server.entries, bytes: server.bytes, sourcePath, disk.path, front: server.front), true)
        }
        let removed = disk.purge(sourcePath: sourcePath)
        return (diskOutcome(entries: removed.entries, bytes: removed.bytes, sourcePath, disk.path), false)
    }

    /// `front`: what the server said of the front cache (`; N answers … from nginx's front cache …`).
    func diskOutcome(entries: Int, bytes: Int, _ sourcePath: String, _ diskPath: String, front: String = "") -> Outcome {
        Outcome(target: "disk", ok: true, answer: "purged \(entries) entries (\(Output.bytes(bytes))) of \(sourcePath) from \(diskPath)\(front)",
                removed: entries)
    }

    /// The front cache of `purge.nginx_cache`, purged by this command (no server did it): one
    /// source's answers, or all of them (`sourcePath` nil). Nil when none is configured.
    func purgeFront(_ sourcePath: String?) -> Outcome? {
        guard !purge.nginxCache.isEmpty else { return nil }
        let front = NginxFrontCache(path: purge.nginxCache)
        let removal = sourcePath.map { front.purge(tag: SourceTag(sourcePath: $0)) } ?? front.purgeAll()
        let failed = removal.failed > 0 ? "; \(removal.failed) files could not be read or removed (run kiln as nginx's workers' user)" : ""
        return Outcome(target: "nginx front cache \(front.path)", ok: removal.failed == 0,
                       answer: "removed \(removal.files) answers (\(Output.bytes(removal.bytes)))\(failed)", removed: removal.files)
    }

    /// Every entry, through the local server of `diskPath` when one answers; nil otherwise.
    func purgeAllThroughLocalServer(diskPath: String) -> ServerPurge? {
        localServerPurge(query: "all=1&disk=\(PurgeTiers.percentEncoded(diskPath))")
    }

    /// What the local master removed; nil when no master of this disk cache answered.
    func purgeThroughLocalServer(_ sourcePath: String, diskPath: String) -> ServerPurge? {
        localServerPurge(query: "source=\(PurgeTiers.percentEncoded(sourcePath))&disk=\(PurgeTiers.percentEncoded(diskPath))")
    }

    /// A master's answer: disk entries and bytes, and the rest of its line (its front cache's part).
    struct ServerPurge {
        var entries: Int
        var bytes: Int
        var front: String
    }

    func localServerPurge(query: String) -> ServerPurge? {
        guard let socket = StatusSocket(configuration.server),
              let r = try? socket.request("POST", "/_kiln/purge?\(query)", timeout: purge.timeout), r.status == 200 else { return nil }
        let line = PurgeTiers.firstLine(r.text)
        guard let (entries, bytes) = PurgeTiers.removedCounts(line) else { return nil }
        return ServerPurge(entries: entries, bytes: bytes, front: line.firstRange(of: "; ").map { String(line[$0.lowerBound...]) } ?? "")
    }

    /// `purged N entries (B bytes) of <path>` (Master+Purge.swift) → (N, B).
    static func removedCounts(_ line: String) -> (Int, Int)? {
        let words = line.split(separator: " ")
        guard words.count >= 5, words[0] == "purged", let n = Int(words[1]), let b = Int(words[3].dropFirst()) else { return nil }
        return (n, b)
    }
}
