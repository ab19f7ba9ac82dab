import KilnFastCGI
import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnModel
import KilnPOSIX

/// `[server]`: the master and its workers. Read once at start-up (and again on SIGHUP).
public struct ServerConfiguration: ConfigSection, Equatable {
    /// Where nginx connects.
    public var listen: ListenAddress = Key.listen.defaultValue
    /// Worker processes, each serving one request at a time. Default: the number of cores this
    /// process may use (its CPU affinity, so `taskset` and container cpusets count; not CPU
    /// quotas), at most 256.
    public var workers = Key.workers.defaultValue
    /// Permissions of a unix socket. nginx's workers run as `www-data` (Debian) or `nobody`;
    /// they need write permission.
    public var socketMode: UInt32 = Key.socketMode.defaultValue
    /// User name (or numeric id) that owns a unix socket; empty: unchanged (the user running Kiln).
    public var socketOwner = Key.socketOwner.defaultValue
    /// Group name (or numeric id) of a unix socket, e.g. `www-data` with mode 0660; empty: unchanged.
    public var socketGroup = Key.socketGroup.defaultValue
    /// Connections the kernel queues while every worker is busy; default and cap: the kernel's
    /// `net.core.somaxconn` (`ListenBacklog`).
    public var backlog = Key.backlog.defaultValue
    /// How long a stop (SIGTERM, SIGINT, SIGQUIT) or a reload (SIGHUP) waits for workers to finish
    /// their request before SIGKILL, in seconds.
    public var shutdownTimeout: Double = Key.shutdownTimeout.defaultValue
    /// A worker exits after this many requests and the master starts a fresh one (recycling, as
    /// php-fpm's `pm.max_requests`); 0: unlimited.
    public var maxRequests = Key.maxRequests.defaultValue
    /// How long a worker waits for one whole FastCGI request (BEGIN_REQUEST, params, STDIN to its
    /// end) from the connection's accept, in seconds; past it the connection is closed. Also bounds
    /// a write of the answer that makes no progress.
    public var requestReadTimeout: Double = Key.requestReadTimeout.defaultValue
    /// How long a connection the web server keeps open (`fastcgi_keep_conn on`) may stay idle
    /// between requests, in seconds; the worker serves nobody else meanwhile.
    public var keepaliveTimeout: Double = Key.keepaliveTimeout.defaultValue
    /// File the master writes its PID to (removed on exit), for `kill -HUP`; empty: none.
    public var pidFile = Key.pidFile.defaultValue
    /// Seconds connections may wait in the listen queue while every worker is busy before the
    /// master answers them itself with a fast 503 and `Retry-After`; 0: never (they wait).
    public var queueTimeout: Double = Key.queueTimeout.defaultValue
    /// Where the master itself answers `/_kiln/health` (never behind a busy worker): `auto`
    /// (beside `listen`: `kiln.sock` → `kiln-status.sock`, port → port + 1), `off`, or an address.
    public var statusListen = Key.statusListen.defaultValue
    /// Whether workers count requests for `/_kiln/metrics` (a few atomic adds per request).
    public var metrics = Key.metrics.defaultValue
    /// TCP peers that may connect (main and status socket); others are closed unread. Not
    /// checked on unix sockets. See `PeerAccess`.
    public var allowedPeers: [IPNetwork] = Key.allowedPeers.defaultValue
    /// When not empty, every request must carry it as the FastCGI param `KILN_PEER_SECRET`.
    public var peerSecret = Key.peerSecret.defaultValue
    /// File holding the peer secret instead (Docker secrets, a 0600 file), read at start and reload.
    public var peerSecretFile = Key.peerSecretFile.defaultValue
    /// Lookup lane workers (`ServerConfiguration+Lookup.swift`); 0: none, every request goes to
    /// the render workers as before.
    public var lookupWorkers = Key.lookupWorkers.defaultValue
    /// Where the lookup lane listens: `auto` (beside `listen`) or an address.
    public var lookupListen = Key.lookupListen.defaultValue

    /// The `[server]` keys: the one place their names, types, defaults and ranges are written.
    public enum Key {
        public static let listen = Setting<ListenAddress>.custom(
            "server.listen", default: .unix(path: "/run/kiln/kiln.sock"), type: "address", expected: ListenAddress.forms,
            doc: "`unix:/path/kiln.sock` (its folder is created when missing, as `/run/kiln` by root) or `127.0.0.1:9000` / `[::1]:9000`; nginx/kiln.conf connects to the default",
            parse: { try? ListenAddress(parsing: $0) }, format: { $0.description }).flag("listen")
        public static let workers = Setting.count("server.workers", default: ServerConfiguration.defaultWorkers, in: 1...256,
                                                   doc: "number of worker processes").flag("workers").defaultText("one per core")
        public static let socketMode = Setting<UInt32>.custom(
            "server.socket_mode", default: 0o660, type: "octal mode", expected: "an octal mode such as \"0660\" (at most 0777)",
            doc: "mode of the unix socket",
            parse: { ServerConfiguration.parseMode($0) }, format: { "0" + String($0, radix: 8) }).flag("socket-mode")
        public static let socketOwner = Setting.text("server.socket_owner", default: "", expected: "a user name such as www-data, or empty",
                                                     doc: "owner of the unix socket (user name or id); empty: unchanged",
                                                     check: { ServerConfiguration.isAccountName($0) })
        public static let socketGroup = Setting.text("server.socket_group", default: "", expected: "a group name such as www-data, or empty",
                                                     doc: "group of the unix socket, e.g. `www-data` so nginx can connect; empty: unchanged",
                                                     check: { ServerConfiguration.isAccountName($0) }).flag("socket-group")
        public static let backlog = Setting.count(
            "server.backlog", default: ListenBacklog.defaultValue, in: 1...65_535,
            doc: "listen queue length: connections wait there while every worker is busy, until `queue_timeout` answers them; more than `net.core.somaxconn` is cut to it (logged)")
            .defaultText("`net.core.somaxconn`")
        public static let shutdownTimeout = Setting.duration("server.shutdown_timeout", default: 10, in: 0...3600,
                                                             doc: "how long a stop or reload waits for in-flight requests")
        public static let maxRequests = Setting.count("server.max_requests", default: 0, in: 0...1_000_000_000,
                                                      doc: "a worker is replaced after this many requests (0: never)")
        public static let requestReadTimeout = Setting.duration(
            "server.request_read_timeout", default: 5, in: 0.1...600,
            doc: "a worker closes a FastCGI connection that has not sent a whole request this long after accept (or a write that makes no progress)")
        public static let keepaliveTimeout = Setting.duration(
            "server.keepalive_timeout", default: 5, in: 0...3600,
            doc: "with `fastcgi_keep_conn on`, how long a kept connection may idle between requests (the worker serves no one else meanwhile)")
        public static let pidFile = Setting.text("server.pid_file", default: "",
                                                 doc: "where the master writes its PID; empty: nowhere")
        public static let queueTimeout = Setting.duration(
            "server.queue_timeout", default: 1, in: 0...3600,
            doc: "when connections have waited this long in the listen queue while every worker is busy, the master answers the queue itself: 503 with `Retry-After`; 0: never")
        public static let statusListen = Setting.text(
            "server.status_listen", default: "auto",
            expected: "auto, off, `unix:/path/kiln-status.sock` or `127.0.0.1:9001`",
            doc: "where the master answers `/_kiln/health` itself, even when every worker is busy: `auto` is beside `listen` (`kiln.sock` → `kiln-status.sock`, port + 1), `off` none",
            check: { $0 == "auto" || $0 == "off" || (try? ListenAddress(parsing: $0)) != nil })
        public static let metrics = Setting.bool(
            "server.metrics", default: true,
            doc: "workers count every request for `/_kiln/metrics` (off: the metrics stay at zero; the status page and health still work)")
        public static let allowedPeers = Setting<[IPNetwork]>.custom(
            "server.allowed_peers", default: IPNetwork.loopback, type: "address list",
            expected: "IPv4/IPv6 addresses or CIDR networks separated by commas, such as 10.0.0.5,10.1.0.0/16,fd00::/8 (0.0.0.0/0,::/0: anyone)",
            doc: "with a TCP `listen`, the only peers whose connections are served (main and status socket); others are closed before anything is read",
            parse: { IPNetwork.parseList($0) }, format: { IPNetwork.formatList($0) })
        public static let peerSecret = Setting.text(
            "server.peer_secret", default: "", expected: "empty, or 16 to 1024 printable ASCII characters without spaces (openssl rand -hex 32)",
            doc: "when set, every request must carry this value as the FastCGI param `KILN_PEER_SECRET`, else 403; prefer `peer_secret_file` or `KILN_SERVER_PEER_SECRET`",
            check: { $0.isEmpty || ServerConfiguration.isPeerSecret($0) }).secret()
        public static let peerSecretFile = Setting.text("server.peer_secret_file", default: "",
                                                        doc: "file holding the peer secret instead (one line); empty: none")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.listen) { $0.listen = $1 },
        ConfigField(Key.workers) { $0.workers = $1 },
        ConfigField(Key.socketMode) { $0.socketMode = $1 },
        ConfigField(Key.socketOwner) { $0.socketOwner = $1 },
        ConfigField(Key.socketGroup) { $0.socketGroup = $1 },
        ConfigField(Key.backlog) { $0.backlog = $1 },
        ConfigField(Key.shutdownTimeout) { $0.shutdownTimeout = $1 },
        ConfigField(Key.maxRequests) { $0.maxRequests = $1 },
        ConfigField(Key.requestReadTimeout) { $0.requestReadTimeout = $1 },
        ConfigField(Key.keepaliveTimeout) { $0.keepaliveTimeout = $1 },
        ConfigField(Key.pidFile) { $0.pidFile = $1 },
        ConfigField(Key.queueTimeout) { $0.queueTimeout = $1 },
        ConfigField(Key.statusListen) { $0.statusListen = $1 },
        ConfigField(Key.metrics) { $0.metrics = $1 },
        ConfigField(Key.allowedPeers) { $0.allowedPeers = $1 },
        ConfigField(Key.peerSecret) { $0.peerSecret = $1 },
        ConfigField(Key.peerSecretFile) { $0.peerSecretFile = $1 },
        ConfigField(Key.lookupWorkers) { $0.lookupWorkers = $1 },
        ConfigField(Key.lookupListen) { $0.lookupListen = $1 },
    ]

    /// The secret in force: `peer_secret`, or the contents of `peer_secret_file` (read now; a
    /// final newline is not part of it); empty: none. Refuses a secret in both places, and a file
    /// that cannot be read or does not hold a valid secret.
    public func resolvedPeerSecret(origin: (String) -> String = { _ in "default" }) throws(ConfigError) -> String {
        guard !peerSecretFile.isEmpty else { return peerSecret }
        let fileKey = Key.peerSecretFile.key
        guard peerSecret.isEmpty else {
            throw .invalid(key: fileKey, value: peerSecretFile, expected: "empty while \(Key.peerSecret.key) is set (the secret comes from one place)",
                           origin: origin(fileKey))
        }
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try Files.read(peerSecretFile)
        } catch {
            throw .invalid(key: fileKey, value: peerSecretFile, expected: "a readable file (\(Errno.text(error.code)))", origin: origin(fileKey))
        }
        var text = Substring(String(decoding: bytes, as: UTF8.self))
        while let last = text.last, last == "\n" || last == "\r" || last == " " || last == "\t" { text = text.dropLast() }
        guard ServerConfiguration.isPeerSecret(String(text)) else {
            throw .invalid(key: fileKey, value: peerSecretFile, expected: "a file holding one line of \(Key.peerSecret.expected.dropFirst("empty, or ".count))",
                           origin: origin(fileKey))
        }
        return String(text)
    }

    /// 16 to 1024 printable ASCII characters, no spaces: it travels in nginx's configuration as a
    /// `fastcgi_param` value.
    static func isPeerSecret(_ s: String) -> Bool {
        (16...1024).contains(s.utf8.count) && s.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7f }
    }

    /// The address of `status_listen`, nil when `off` (or `auto` cannot derive one).
    public var statusAddress: ListenAddress? {
        switch statusListen {
        case "off": return nil
        case "auto":
            return listen.beside(suffix: "-status", portOffset: 1)
        default:
            return try? ListenAddress(parsing: statusListen)
        }
    }

    /// Available cores, clamped to 1...256.
    public static var defaultWorkers: Int {
        min(max(Int(kiln_available_cpus()), 1), 256)
    }

    public init() {}

    /// `0660`, `660` or `0o660` to 0o660; nil for anything else or above 0777.
    public static func parseMode(_ raw: String) -> UInt32? {
        var s = Substring(raw.trimmingSpacesAndTabs())
        if s.hasPrefix("0o") || s.hasPrefix("0O") { s = s.dropFirst(2) }
        guard !s.isEmpty, s.count <= 4, s.allSatisfy({ ("0"..."7").contains($0) }),
              let v = UInt32(s, radix: 8), v <= 0o777 else { return nil }
        return v
    }

    /// User and group names as Debian's `adduser` allows them (plus numeric ids), or empty.
    static func isAccountName(_ raw: String) -> Bool {
        let ok = raw.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
                || c == 0x2d || c == 0x5f || c == 0x2e || c == 0x24
        }
        return ok && raw.utf8.count <= 64
    }
}
