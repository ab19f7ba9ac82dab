import KilnModel

/// `[purge]`: where `kiln cache purge --source <path>` sends a purge besides the local disk cache
/// and the shared store: the other hosts of the fleet (their masters' status sockets), the edge
/// caches (Varnish with vmod-xkey) and a CDN's purge API (HTTP hooks). Each list is written as
/// text separated by commas.
public struct PurgeConfiguration: ConfigSection, Equatable {
    /// The status sockets (`server.status_listen`) of the fleet's hosts: each gets
    /// `POST /_kiln/purge?source=<path>` with this host's peer secret.
    public var hosts: [ListenAddress] = Key.hosts.defaultValue
    /// Edge caches (`http://host:port`): each gets `PURGE /` with `xkey: <SourceTag.headerValue>`.
    public var varnish: [String] = Key.varnish.defaultValue
    /// URL templates (`{tag}`: the source's tag, `{path}`: the source path percent-encoded), each
    /// sent as a POST.
    public var hooks: [String] = Key.hooks.defaultValue
    /// Headers of every hook request (`Name: value`), such as a CDN's API token.
    public var hookHeaders: [String] = Key.hookHeaders.defaultValue
    /// The body of every hook request, a template like the URLs (empty: none).
    public var hookBody = Key.hookBody.defaultValue
    /// Seconds each target may take (connect and answer).
    public var timeout: Double = Key.timeout.defaultValue
    /// The folder of nginx's front cache on this host (`NginxFrontCache`); empty: none.
    public var nginxCache = Key.nginxCache.defaultValue

    public enum Key {
        public static let hosts = Setting<[ListenAddress]>.custom(
            "purge.hosts", default: [], type: "address list",
            expected: "status sockets of the fleet's hosts separated by commas, such as 10.0.0.5:9001,10.0.0.6:9001 or unix:/run/kiln/kiln-status.sock",
            doc: "the status sockets (`server.status_listen`) of every host of the fleet: `kiln cache purge --source` asks each master to drop the source from its disk and its workers' memory (with this host's `server.peer_secret`)",
            parse: { ConfigUnits.list($0) { try? ListenAddress(parsing: $0) } },
            format: { $0.map(\.description).joined(separator: ",") })
        public static let varnish = Setting<[String]>.custom(
            "purge.varnish", default: [], type: "URL list",
            expected: "http://host:port addresses separated by commas",
            doc: "edge caches that `kiln cache purge --source` sends `PURGE /` with the header `xkey: kiln-src-<tag>` (Varnish with vmod-xkey)",
            parse: { ConfigUnits.list($0) { ConfigUnits.isHTTPURL($0, httpsToo: false) ? $0 : nil } },
            format: { $0.joined(separator: ",") })
        public static let hooks = Setting<[String]>.custom(
            "purge.hooks", default: [], type: "URL list",
            expected: "http:// or https:// URL templates separated by commas, with {tag} and {path}",
            doc: "URLs `kiln cache purge --source` POSTs to (a CDN's purge API): `{tag}` becomes the source's tag (`kiln-src-<hex>`), `{path}` the source path percent-encoded",
            parse: { ConfigUnits.list($0) { ConfigUnits.isHTTPURL($0, httpsToo: true) ? $0 : nil } },
            format: { $0.joined(separator: ",") })
        public static let hookHeaders = Setting<[String]>.custom(
            "purge.hook_headers", default: [], type: "header list",
            expected: "`Name: value` headers separated by commas",
            doc: "headers of every hook request, such as `Authorization: Bearer <token>` (prefer `KILN_PURGE_HOOK_HEADERS` for tokens)",
            parse: { ConfigUnits.list($0) { ConfigUnits.header($0) != nil ? $0 : nil } },
            format: { $0.joined(separator: ",") }).secret()
        public static let hookBody = Setting.text(
            "purge.hook_body", default: "", expected: "one line, with {tag} and {path}",
            doc: "the body of every hook request, a template like the URLs (e.g. `{\"tags\":[\"{tag}\"]}` for Cloudflare); empty: none",
            check: { v in !v.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } })
        public static let nginxCache = Setting.text(
            "purge.nginx_cache", default: "", expected: "an absolute folder path, or empty",
            doc: "the folder of nginx's front cache on this host (`fastcgi_cache_path` of nginx/kiln-front-cache.conf): "
                + "every purge this host makes removes the source's answers from it too (files whose stored header carries the "
                + "source's tag: keep a surrogate-key header on), or all of them; kiln must run as nginx's workers' user or root; empty: not reached",
            check: { v in v.isEmpty || (v.hasPrefix("/") && !v.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }) })
        public static let timeout = Setting.duration("purge.timeout", default: 5, in: 0.1...300,
                                                     doc: "how long each host, edge and hook of a purge may take")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.hosts) { $0.hosts = $1 },
        ConfigField(Key.varnish) { $0.varnish = $1 },
        ConfigField(Key.hooks) { $0.hooks = $1 },
        ConfigField(Key.hookHeaders) { $0.hookHeaders = $1 },
        ConfigField(Key.hookBody) { $0.hookBody = $1 },
        ConfigField(Key.timeout) { $0.timeout = $1 },
        ConfigField(Key.nginxCache) { $0.nginxCache = $1 },
    ]

    public init() {}

    /// Whether any tier besides the local disk (and the shared store) is configured.
    public var hasTargets: Bool { !hosts.isEmpty || !varnish.isEmpty || !hooks.isEmpty }

    /// `hook_headers` as pairs.
    public var headerPairs: [(String, String)] { hookHeaders.compactMap(ConfigUnits.header) }
}
