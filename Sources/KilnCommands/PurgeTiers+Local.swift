import KilnFastCGI
import KilnModel
import KilnPipeline
import KilnServer

/// The local disk tier of a purge. When this host's server is running (its master answers on
/// `server.status_listen`) and uses the same disk cache, the purge goes through it
/// (`POST /_kiln/purge?source=…&disk=…`), so the server's log has one line for it, as for a
/// peer's purge; otherwise (no server, another server's folder) the command purges the folder
/// itself. Either way the entries go and the purge journal tells every worker to drop the
/// source from memory at its next request, entries on disk or not.
extension PurgeTiers {
    func purgeLocalDisk(_ sourcePath: String) -> Outcome? {
        guard let disk = DiskCache(configuration.cache, logger: logger) else { return nil }
        if let (entries, bytes) = purgeThroughLocalServer(sourcePath, diskPath: disk.path) {
            return diskOutcome(entries: entries, bytes: bytes, sourcePath, disk.path)
        }
        let removed = disk.purge(sourcePath: sourcePath)
        return diskOutcome(entries: removed.entries, bytes: removed.bytes, sourcePath, disk.path)
    }

    func diskOutcome(entries: Int, bytes: Int, _ sourcePath: String, _ diskPath: String) -> Outcome {
        Outcome(target: "disk", ok: true, answer: "purged \(entries) entries (\(Output.bytes(bytes))) of \(sourcePath) from \(diskPath)",
                removed: entries)
    }

    /// Every entry, through the local server of `diskPath` when one answers; nil otherwise.
    func purgeAllThroughLocalServer(diskPath: String) -> (entries: Int, bytes: Int)? {
        localServerPurge(query: "all=1&disk=\(PurgeTiers.percentEncoded(diskPath))").map { (entries: $0.0, bytes: $0.1) }
    }

    /// Entries and bytes the local master removed; nil when no master of this disk cache answered.
    func purgeThroughLocalServer(_ sourcePath: String, diskPath: String) -> (Int, Int)? {
        localServerPurge(query: "source=\(PurgeTiers.percentEncoded(sourcePath))&disk=\(PurgeTiers.percentEncoded(diskPath))")
    }

    func localServerPurge(query: String) -> (Int, Int)? {
        guard let socket = StatusSocket(configuration.server),
              let r = try? socket.request("POST", "/_kiln/purge?\(query)", timeout: purge.timeout), r.status == 200 else { return nil }
        return PurgeTiers.removedCounts(PurgeTiers.firstLine(r.text))
    }

    /// `purged N entries (B bytes) of <path>` (Master+Purge.swift) → (N, B).
    static func removedCounts(_ line: String) -> (Int, Int)? {
        let words = line.split(separator: " ")
        guard words.count >= 5, words[0] == "purged", let n = Int(words[1]), let b = Int(words[3].dropFirst()) else { return nil }
        return (n, b)
    }
}
