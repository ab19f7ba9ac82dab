import Glibc
import KilnModel
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnConfigFile
@testable import KilnServer

@Suite struct ServerConfigurationTests {
    let loader = ConfigurationLoader(catalog: KilnConfiguration.catalog)

    @Test func defaults() throws {
        let c = try ServerConfiguration(ConfigValues())
        #expect(c == ServerConfiguration())
        #expect(c.listen == .unix(path: "/run/kiln/kiln.sock"))
        #expect(c.workers >= 1 && c.workers <= 256)
        #expect(c.workers <= sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        #expect(c.socketMode == 0o660)
        #expect(c.socketOwner == "" && c.socketGroup == "")
        #expect(c.backlog == min(ListenBacklog.kernelLimit() ?? ListenBacklog.assumedLimit, 65_535))
        #expect(c.shutdownTimeout == 10)
        #expect(c.maxRequests == 0)
        #expect(c.pidFile == "")
        #expect(c.requestReadTimeout == 5 && c.keepaliveTimeout == 5)
        #expect(c.queueTimeout == 1 && c.statusListen == "auto")
    }

    @Test func everyKeyIsRead() throws {
        let c = try ServerConfiguration(ConfigValues([
            "server.listen": "127.0.0.1:9001", "server.workers": "3", "server.socket_mode": "0666",
            "server.socket_owner": "www-data", "server.socket_group": "www-data", "server.backlog": "128",
            "server.shutdown_timeout": "500ms", "server.max_requests": "10_000", "server.pid_file": "/run/kiln.pid",
            "server.request_read_timeout": "1500ms", "server.keepalive_timeout": "0s",
            "server.queue_timeout": "250ms", "server.status_listen": "off", "server.metrics": "false",
        ]))
        #expect(c.listen == .tcp(host: "127.0.0.1", port: 9001))
        #expect(c.workers == 3)
        #expect(c.socketMode == 0o666)
        #expect(c.socketOwner == "www-data" && c.socketGroup == "www-data")
        #expect(c.backlog == 128)
        #expect(c.shutdownTimeout == 0.5)
        #expect(c.maxRequests == 10_000)
        #expect(c.pidFile == "/run/kiln.pid")
        #expect(c.requestReadTimeout == 1.5 && c.keepaliveTimeout == 0)
        #expect(c.queueTimeout == 0.25 && c.statusListen == "off" && c.statusAddress == nil && !c.metrics)
        #expect(ServerConfiguration.keys.count == 19)
    }

    /// The lookup lane's socket: beside `listen` (unix) or port + 2 (TCP); none without lane workers.
    @Test func lookupLaneAddress() throws {
        var c = ServerConfiguration()
        #expect(c.lookupAddress == nil && c.slots == c.workers)
        c.lookupWorkers = 1
        c.workers = 2
        c.listen = .unix(path: "/run/kiln/kiln.sock")
        #expect(c.lookupAddress == .unix(path: "/run/kiln/kiln-lookup.sock"))
        #expect(c.slots == 3 && !c.isLookupSlot(1) && c.isLookupSlot(2))
        c.listen = .tcp(host: "127.0.0.1", port: 9000)
        #expect(c.lookupAddress == .tcp(host: "127.0.0.1", port: 9002))
        c.lookupListen = "unix:/tmp/lane.sock"
        #expect(c.lookupAddress == .unix(path: "/tmp/lane.sock"))
    }

    @Test(arguments: [
        ("server.workers", "0"), ("server.workers", "257"), ("server.workers", "four"),
        ("server.listen", "localhost:80"), ("server.socket_mode", "rw-rw----"), ("server.socket_mode", "1777"),
        ("server.socket_mode", "0668"), ("server.socket_mode", ""), ("server.backlog", "0"),
        ("server.shutdown_timeout", "-1s"), ("server.shutdown_timeout", "2h"), ("server.shutdown_timeout", "10"),
        ("server.max_requests", "-5"), ("server.max_requests", "10k"),
        ("server.request_read_timeout", "0s"), ("server.request_read_timeout", "50ms"), ("server.request_read_timeout", "11m"),
        ("server.keepalive_timeout", "-1s"), ("server.keepalive_timeout", "5"),
        ("server.socket_owner", "www data"), ("server.socket_group", "a;b"),
    ])
    func invalidValues(_ key: String, _ value: String) {
        do {
            _ = try ServerConfiguration(ConfigValues([key: value], origin: "test"))
            Issue.record("accepted \(key) = \(value)")
        } catch {
            guard case let .invalid(k, v, _, origin) = error else { Issue.record("\(error)"); return }
            #expect(k == key && v == value && origin == "test")
        }
    }

    @Test func socketModeForms() {
        #expect(ServerConfiguration.parseMode("0660") == 0o660)
        #expect(ServerConfiguration.parseMode("660") == 0o660)
        #expect(ServerConfiguration.parseMode("0o600") == 0o600)
        #expect(ServerConfiguration.parseMode("0777") == 0o777)
        #expect(ServerConfiguration.parseMode("0") == 0)
        #expect(ServerConfiguration.parseMode("01777") == nil)
        #expect(ServerConfiguration.parseMode("9") == nil)
    }

    @Test func layersFileEnvironmentFlags() throws {
        let path = try TemporaryFile.write("""
            [server]
            workers = 3        # from the file
            backlog = 100
            listen = "unix:/tmp/from-file.sock"
            [source]
            root = "/srv/images"
            """)
        defer { unlink(path) }
        let values = try loader.load(
            file: path,
            environment: ["KILN_SERVER_WORKERS": "5", "KILN_SERVER_LISTEN": "127.0.0.1:9100", "PATH": "/bin", "KILNX": "1"],
            overrides: [ConfigOverride(ServerConfiguration.Key.listen, value: "unix:/tmp/flag.sock")])
        let c = try ServerConfiguration(values)
        #expect(c.workers == 5)                               // environment over file
        #expect(c.backlog == 100)                             // file over default
        #expect(c.listen == .unix(path: "/tmp/flag.sock"))    // flag over environment
        #expect(values.string("source.root") == "/srv/images")
        #expect(values.origin("server.workers") == "environment KILN_SERVER_WORKERS")
        #expect(values.origin("server.backlog") == "file \(path):3")
        #expect(values.origin("server.listen") == "flag --listen")
        #expect(values.origin("server.max_requests") == "default")
    }

    @Test func setFlagOverridesEnvironmentAndNamedFlagsOverrideSet() throws {
        let values = try loader.load(file: nil, environment: ["KILN_SERVER_BACKLOG": "10", "KILN_SERVER_WORKERS": "2"],
                                     overrides: [try ConfigOverride(assignment: "server.backlog=20"),
                                                 try ConfigOverride(assignment: "server.workers=3"),
                                                 ConfigOverride(ServerConfiguration.Key.workers, value: "4")])
        let c = try ServerConfiguration(values)
        #expect(c.backlog == 20 && c.workers == 4)
        #expect(values.origin("server.backlog") == "flag --set" && values.origin("server.workers") == "flag --workers")
    }

    @Test func environmentOverridesDefault() throws {
        let values = try loader.load(file: nil, environment: ["KILN_SERVER_MAX_REQUESTS": "500_000"], overrides: [])
        #expect(try ServerConfiguration(values).maxRequests == 500_000)
    }

    @Test func invalidEnvironmentValueNamesTheVariable() throws {
        let values = try loader.load(file: nil, environment: ["KILN_SERVER_BACKLOG": "lots"], overrides: [])
        do {
            _ = try ServerConfiguration(values)
            Issue.record("accepted backlog = lots")
        } catch {
            #expect("\(error)".hasPrefix("setting server.backlog = 'lots' (environment KILN_SERVER_BACKLOG): expected a whole number in 1...65_535"))
        }
    }

    @Test func unknownKeysAreRejectedFromEveryLayer() throws {
        #expect(throws: ConfigError.unknownKey("server.wokers", origin: "flag --set")) {
            try loader.load(file: nil, environment: [:], overrides: [try ConfigOverride(assignment: "server.wokers=4")])
        }
        #expect(throws: ConfigError.unknownKey("server.wokers", origin: "environment KILN_SERVER_WOKERS")) {
            try loader.load(file: nil, environment: ["KILN_SERVER_WOKERS": "1"], overrides: [])
        }
        // Variables of sections nothing declares belong to scripts (KILN_BIN), not to kiln.
        let values = try loader.load(file: nil, environment: ["KILN_BIN": "/x", "KILN_SKIP_BUILD": "1"], overrides: [])
        #expect(values.values.isEmpty)
        let path = try TemporaryFile.write("[server]\nworkers = 2\nthreads = 4\n")
        defer { unlink(path) }
        #expect(throws: ConfigError.unknownKey("server.threads", origin: "file \(path):3")) {
            try loader.load(file: path, environment: [:], overrides: [])
        }
    }

    @Test func presetsAreFreeKeys() throws {
        let values = try loader.load(file: nil, environment: ["KILN_PRESETS_AVATAR": "rs:96:96:fill"],
                                     overrides: [try ConfigOverride(assignment: "presets.thumb=w:200")])
        #expect(values.string("presets.avatar") == "rs:96:96:fill" && values.string("presets.thumb") == "w:200")
        #expect(throws: ConfigError.self) { try loader.load(file: nil, environment: [:], overrides: [try ConfigOverride(assignment: "presets.=x")]) }
    }

    @Test func missingFileAndSyntaxErrors() throws {
        #expect(throws: ConfigError.self) { try loader.load(file: "/nonexistent/kiln.toml", environment: [:], overrides: []) }
        let path = try TemporaryFile.write("workers = 2\n")
        defer { unlink(path) }
        do {
            _ = try loader.load(file: path, environment: [:], overrides: [])
            Issue.record("accepted a key outside a section")
        } catch {
            guard case let .syntax(file, line, message) = error else { Issue.record("\(error)"); return }
            #expect(file == path && line == 1 && message.contains("[server]"))
        }
    }

    @Test func setAssignments() throws {
        let o = try ConfigOverride(assignment: "Server.Max_Requests = 100")
        #expect(o == ConfigOverride(key: "server.max_requests", value: "100", origin: "flag --set"))
        #expect(try ConfigOverride(assignment: "http.cache_control=public, max-age=60").value == "public, max-age=60")
        #expect(throws: ConfigError.self) { try ConfigOverride(assignment: "workers=4") }
        #expect(throws: ConfigError.self) { try ConfigOverride(assignment: "server.workers") }
        #expect(throws: ConfigError.self) { try ConfigOverride(assignment: "a.b.c=1") }
    }

    @Test func logLevel() throws {
        #expect(try LogConfiguration(ConfigValues()).level == .info)
        #expect(try LogConfiguration(ConfigValues(["log.level": "DEBUG"])).level == .debug)
        #expect(throws: ConfigError.self) { try LogConfiguration(ConfigValues(["log.level": "loud"])) }
    }
}

enum TemporaryFile {
    /// Writes `text` to a new file under /tmp and returns its path.
    static func write(_ text: String) throws -> String {
        var template = Array("/tmp/kiln-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw FastCGITestClient.Failure(description: "mkstemp failed") }
        let bytes = Array(text.utf8)
        _ = Glibc.write(fd, bytes, bytes.count)
        close(fd)
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// A new empty folder under /tmp.
    static func folder() throws -> String {
        var template = Array("/tmp/kiln-test-XXXXXX".utf8CString)
        guard mkdtemp(&template) != nil else { throw FastCGITestClient.Failure(description: "mkdtemp failed") }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
