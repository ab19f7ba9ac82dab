import CKilnShims
import Glibc
import KilnCore

/// `[server]`: the master and its workers. Read once at start-up (and again on SIGHUP).
public struct ServerConfiguration: Sendable, Equatable {
    /// `listen`: where nginx connects, `unix:/path` or `127.0.0.1:9000` / `[::1]:9000`.
    /// Default `unix:/tmp/kiln.sock`.
    public var listen: ListenAddress = .unix(path: "/tmp/kiln.sock")
    /// `workers`: worker processes, 1...256, each serving one request at a time.
    /// Default: the number of cores this process may use (its CPU affinity, so `taskset` and
    /// container cpusets count; not CPU quotas), at most 256.
    public var workers: Int = ServerConfiguration.defaultWorkers
    /// `socket_mode`: permissions of a unix socket, an octal string such as `0660` (at most 0777).
    /// nginx's workers run as `www-data` (Debian) or `nobody`; they need write permission. Default 0660.
    public var socketMode: UInt32 = 0o660
    /// `socket_owner`: user name (or numeric id) that owns a unix socket. Default empty: unchanged
    /// (the user running Kiln).
    public var socketOwner = ""
    /// `socket_group`: group name (or numeric id) of a unix socket, e.g. `www-data` together with
    /// mode 0660. Default empty: unchanged.
    public var socketGroup = ""
    /// `backlog`: connections the kernel queues while every worker is busy, 1...65535 (capped by
    /// `net.core.somaxconn`). Default 64.
    public var backlog = 64
    /// `shutdown_timeout`: how long a stop (SIGTERM, SIGINT, SIGQUIT) or a reload (SIGHUP) waits for
    /// workers to finish their request before SIGKILL, 0...3600 s (`10s`, `500ms`, `2m`). Default 10 s.
    public var shutdownTimeout: Double = 10
    /// `max_requests`: a worker exits after this many requests and the master starts a fresh one
    /// (recycling, as php-fpm's `pm.max_requests`). Default 0: unlimited.
    public var maxRequests = 0
    /// `pid_file`: file the master writes its PID to (removed on exit), for `kill -HUP`. The worker
    /// PIDs are logged at every start and are the master's children (`pgrep -P`). Default empty: none.
    public var pidFile = ""

    /// Every `[server]` key, for `ConfigurationLoader`'s unknown-key check.
    public static let keys: Set<String> = [
        "server.listen", "server.workers", "server.socket_mode", "server.socket_owner",
        "server.socket_group", "server.backlog", "server.shutdown_timeout", "server.max_requests",
        "server.pid_file",
    ]

    /// Available cores, clamped to 1...256.
    public static var defaultWorkers: Int {
        min(max(Int(kiln_available_cpus()), 1), 256)
    }

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        if let raw = v.string("server.listen") {
            do {
                listen = try ListenAddress(parsing: raw)
            } catch {
                throw .invalid(key: "server.listen", value: raw, expected: "\(ListenAddress.forms) (\(error.reason))", origin: v.origins["server.listen"] ?? "")
            }
        }
        workers = try v.int("server.workers", default: workers, in: 1...256)
        if let raw = v.string("server.socket_mode") {
            guard let mode = ServerConfiguration.parseMode(raw) else {
                throw .invalid(key: "server.socket_mode", value: raw, expected: "an octal mode such as 0660 (at most 0777)", origin: v.origins["server.socket_mode"] ?? "")
            }
            socketMode = mode
        }
        socketOwner = try ServerConfiguration.name(v, "server.socket_owner")
        socketGroup = try ServerConfiguration.name(v, "server.socket_group")
        backlog = try v.int("server.backlog", default: backlog, in: 1...65_535)
        shutdownTimeout = try v.seconds("server.shutdown_timeout", default: shutdownTimeout, in: 0...3600)
        maxRequests = try v.int("server.max_requests", default: maxRequests, in: 0...1_000_000_000)
        pidFile = v.string("server.pid_file", default: pidFile)
    }

    /// `0660`, `660` or `0o660` to 0o660; nil for anything else or above 0777.
    public static func parseMode(_ raw: String) -> UInt32? {
        var s = Substring(raw.trimmingSpacesAndTabs())
        if s.hasPrefix("0o") || s.hasPrefix("0O") { s = s.dropFirst(2) }
        guard !s.isEmpty, s.count <= 4, s.allSatisfy({ ("0"..."7").contains($0) }),
              let v = UInt32(s, radix: 8), v <= 0o777 else { return nil }
        return v
    }

    /// User and group names as Debian's `adduser` allows them (plus numeric ids).
    static func name(_ v: ConfigValues, _ key: String) throws(ConfigError) -> String {
        let raw = v.string(key, default: "")
        let ok = raw.utf8.allSatisfy { c in
            (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)
                || c == 0x2d || c == 0x5f || c == 0x2e || c == 0x24
        }
        guard ok, raw.utf8.count <= 64 else {
            throw .invalid(key: key, value: raw, expected: "a user or group name such as www-data, or empty", origin: v.origins[key] ?? "")
        }
        return raw
    }
}
