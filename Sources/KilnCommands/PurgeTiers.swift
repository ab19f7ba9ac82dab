import Glibc
import KilnFastCGI
import KilnModel
import KilnOrigins
import KilnPipeline
import KilnServer
import Logging

/// Every tier `kiln cache purge --source` reaches, in the order that keeps an old variant from
/// flowing back into a purged tier:
///
/// 1. the shared store (`cache.shared`): every object under `<prefix><SourceTag.hex>/`; first, so
///    no host refills its disk from it;
/// 2. the local disk cache, and through its purge journal the local workers' memory (through
///    the running server when there is one, which logs it: `PurgeTiers+Local.swift`);
///    and nginx's front cache of `purge.nginx_cache` (by the server, or by the command without one);
/// 3. every host of `purge.hosts`: `POST /_kiln/purge?source=<path>` on its master's status
///    socket with `server.peer_secret` (the master does 2. on its host);
/// 4. every edge of `purge.varnish`: `PURGE /` with `xkey: <SourceTag.headerValue>`;
/// 5. every hook of `purge.hooks`: a POST to the template with `{tag}` and `{path}` filled.
///
/// Edges and the CDN come last: what they fetch again comes from hosts that no longer have it.
/// A failure of one target is reported and the others are still purged.
struct PurgeTiers {
    /// What one target answered.
    struct Outcome: Equatable {
        /// `shared store s3://…`, `disk`, `host 10.0.0.5:9001`, `varnish http://…`, `hook https://…`.
        var target: String
        var ok: Bool
        /// One line: what was removed, or the status and first line of the answer, or why it failed.
        var answer: String
        /// Entries or objects removed, where the target counts them (the local disk, the hosts,
        /// the shared store); nil where it does not (edges, hooks).
        var removed: Int? = nil
        /// The report's line: `<target>: <answer>`; the local disk's says it as before this tier
        /// existed (`purged N entries (B) of <path> from <disk_path>`).
        var line: String { target == "disk" ? answer : "\(target): \(answer)" }
    }

    let configuration: KilnConfiguration
    let logger: Logger

    var purge: PurgeConfiguration { configuration.purge }

    /// Whether `sourcePath` names nothing this server could render: no file under `source.root`
    /// and no configured origin as its first segment (a mistyped path, not a deleted source).
    func namesNoSource(_ sourcePath: String) -> Bool {
        let first = sourcePath.split(separator: "/").first.map(String.init) ?? ""
        if configuration.origins.origins.contains(where: { $0.name == first }) { return false }
        var st = stat()
        return stat(configuration.source.root + "/" + sourcePath, &st) != 0
    }

    /// Whether any tier besides the local disk is configured.
    var hasRemoteTiers: Bool { purge.hasTargets || sharedStoreConfigured || !purge.nginxCache.isEmpty }

    /// Every tier, in order.
    func purge(sourcePath: String) -> [Outcome] {
        var out: [Outcome] = []
        if let shared = purgeSharedStore(sourcePath) { out.append(shared) }
        let disk = purgeLocalDisk(sourcePath)
        if let disk { out.append(disk.outcome) }
        if disk?.throughServer != true, let front = purgeFront(sourcePath) { out.append(front) }
        let tag = SourceTag(sourcePath: sourcePath)
        let encoded = PurgeTiers.percentEncoded(sourcePath)
        let secret = (try? configuration.server.resolvedPeerSecret()) ?? ""
        for host in purge.hosts {
            out.append(purgeHost(host, uri: "/_kiln/purge?source=\(encoded)", secret: secret))
        }
        for edge in purge.varnish {
            let url = edge.hasSuffix("/") ? edge : edge + "/"
            out.append(send("PURGE", url, headers: [("xkey", tag.headerValue)], body: [], label: "varnish \(edge)"))
        }
        for template in purge.hooks {
            let url = PurgeTiers.fill(template, tag: tag, encodedPath: encoded)
            let body = Array(PurgeTiers.fill(purge.hookBody, tag: tag, encodedPath: encoded).utf8)
            out.append(send("POST", url, headers: purge.headerPairs, body: body, label: "hook \(PurgeTiers.withoutQuery(template))"))
        }
        return out
    }

    /// `POST uri` to a master's status socket.
    func purgeHost(_ host: ListenAddress, uri: String, secret: String) -> Outcome {
        let label = "host \(host)"
        do throws(FastCGIClient.Failure) {
            let r = try StatusSocket(host, secret: secret).request("POST", uri, timeout: purge.timeout)
            let line = PurgeTiers.firstLine(r.text)
            // "purged N entries (B bytes) of <path>" (Master+Purge.swift): what the host removed.
            let removed = r.status == 200 ? line.split(separator: " ").dropFirst().first.flatMap { Int($0) } : nil
            return Outcome(target: label, ok: r.status == 200, answer: "\(r.status) \(line)", removed: removed)
        } catch {
            return Outcome(target: label, ok: false, answer: error.description)
        }
    }

    /// One HTTP request to an edge or a hook; a 2xx is success.
    func send(_ method: String, _ url: String, headers: [(String, String)], body: [UInt8], label: String) -> Outcome {
        switch PurgeHTTP.send(method, url, headers: headers, body: body, timeout: purge.timeout) {
        case let .success((status, text)):
            return Outcome(target: label, ok: (200..<300).contains(status), answer: "\(status) \(PurgeTiers.firstLine(text))")
        case let .failure(error):
            return Outcome(target: label, ok: false, answer: error.message)
        }
    }

    // MARK: Text

    /// `{tag}` → `kiln-src-<hex>`, `{path}` → the percent-encoded path.
    static func fill(_ template: String, tag: SourceTag, encodedPath: String) -> String {
        template.replacing("{tag}", with: tag.headerValue).replacing("{path}", with: encodedPath)
    }

    /// Every byte but the unreserved ones (RFC 3986: letters, digits, `-._~`) as `%XX`; `/` too.
    static func percentEncoded(_ s: String) -> String {
        PercentEncoding.encode(s, keeping: .unreserved)
    }

    /// The first line of an answer, at most 200 characters, for the report.
    static func firstLine(_ text: String) -> String {
        let line = text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }).first.map(String.init) ?? ""
        return line.count > 200 ? String(line.prefix(200)) + "…" : line
    }

    /// A URL without its query (which may hold a token), for the report.
    static func withoutQuery(_ url: String) -> String { String(url.prefix { $0 != "?" }) }
}
