import Glibc
import KilnPipeline
import KilnModel
import Testing
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnConfigFile
@testable import KilnServer

@Suite struct ConfigFileTests {
    let catalog = KilnConfiguration.catalog

    func load(_ text: String) throws(ConfigError) -> KilnConfiguration {
        var values = ConfigValues()
        for e in try ConfigFile.parse(text, name: "kiln.toml", catalog: catalog) {
            values.merge([e.key: e.value], origin: "file kiln.toml:\(e.line)")
        }
        return try KilnConfiguration(values)
    }

    func error(_ text: String) -> ConfigError? {
        do {
            _ = try load(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func readsEveryTOMLType() throws {
        let c = try load("""
            # a comment
            [server]
            workers = 3
            socket_mode = "0666"
            shutdown_timeout = "500ms"
            [limits]
            max_pixels = 20_000_000
            max_file_bytes = "10MiB"
            [cache]
            disk_size_limit = 1048576          # plain bytes
            disk_low_water = 0.75
            memory_ttl = "2m"
            store = "both"
            [http]
            cache_control = "public, max-age=60 # not a comment"
            server_timing = false
            [presets]
            avatar = "rs:96:96:fill/circle/f:webp"
            """)
        #expect(c.server.workers == 3 && c.server.socketMode == 0o666 && c.server.shutdownTimeout == 0.5)
        #expect(c.limits.maxPixels == 20_000_000 && c.limits.maxFileBytes == 10 << 20)
        #expect(c.cache.diskSizeLimit == 1 << 20 && c.cache.diskLowWater == 0.75 && c.cache.memoryTTL == 120 && c.cache.store == .both)
        #expect(c.http.cacheControl == "public, max-age=60 # not a comment" && !c.http.serverTiming)
        #expect(c.presets.chains == ["avatar": "rs:96:96:fill/circle/f:webp"])
        #expect(try c.pipeline().parser.parse("/pr:avatar/a.jpg", isDecoded: true).operations.count >= 2)
    }

    @Test func entriesCarryTheirLines() throws {
        let entries = try ConfigFile.parse("[server]\n\nworkers = 2\n[limits]\n  max_pixels = 5\n", name: "k", catalog: catalog)
        #expect(entries == [ConfigFile.Entry(key: "limits.max_pixels", value: "5", line: 5),
                            ConfigFile.Entry(key: "server.workers", value: "2", line: 3)])
    }

    @Test func syntaxErrorsNameTheLine() {
        guard case let .syntax(file, line, _)? = error("[server]\nworkers = 2\nbacklog = = 3\n") else {
            Issue.record("no syntax error"); return
        }
        #expect(file == "kiln.toml" && line == 3)
    }

    @Test func theOldINIFormatIsRefusedWithAHint() {
        for text in ["[server]\nworkers = 4          # comment\nlisten = unix:/tmp/kiln.sock\n",
                     "[limits]\nmax_pixels = 50m\n", "[cache]\ndisk_size_limit = 3MB\n"] {
            guard case let .syntax(_, line, message)? = error(text) else { Issue.record("accepted \(text)"); continue }
            #expect(line >= 2)
            #expect(message.contains("old INI format") && message.contains("listen = \"unix:/tmp/kiln.sock\""), "\(message)")
        }
    }

    @Test func wrongTOMLTypesAndUnitsAreRefused() {
        // 0o660 is a TOML integer (432): the mode is written as a string, "0660".
        for (text, key) in [("[server]\nsocket_mode = 0o660\n", "server.socket_mode"),
                            ("[server]\nworkers = \"four\"\n", "server.workers"),
                            ("[server]\nshutdown_timeout = 10\n", "server.shutdown_timeout"),
                            ("[cache]\nmemory_ttl = \"600\"\n", "cache.memory_ttl"),
                            ("[limits]\nmax_pixels = \"50m\"\n", "limits.max_pixels"),
                            ("[limits]\nmax_dimension = 70000\n", "limits.max_dimension"),
                            ("[output]\nprogressive = \"sometimes\"\n", "output.progressive"),
                            ("[log]\nlevel = [\"info\"]\n", "log.level")] {
            guard case let .invalid(k, _, _, origin)? = error(text) else { Issue.record("accepted \(text)"); continue }
            #expect(k == key && origin == "file kiln.toml:2", "\(text)")
        }
    }

    @Test func unknownKeysAndSectionsNameTheLine() {
        #expect(error("[server]\nworkers = 2\nwokers = 3\n") == .unknownKey("server.wokers", origin: "file kiln.toml:3"))
        #expect(error("[servers]\nworkers = 2\n") == .unknownKey("servers.workers", origin: "file kiln.toml:2"))
        #expect(error("[server.tls]\ncert = \"x\"\n") == .unknownKey("server.tls", origin: "file kiln.toml:1"))
    }

    @Test func autoFormatsReachTheOutputSection() throws {
        #expect(try load("[http]\nauto_formats = \"webp\"\n").http.autoFormats == [.webp])
        #expect(try load("[http]\nauto_formats = \"\"\n").http.autoFormats == [])
        #expect(try load("").http.autoFormats == [.avif, .webp])
        #expect(throws: ConfigError.self) { try load("[http]\nauto_formats = \"avif,heic\"\n") }
        #expect(throws: ConfigError.self) { try load("[http]\nauto_formats = \"webp,webp\"\n") }
    }

    @Test func everyFieldOfEverySectionIsDeclared() {
        // A stored property without a declaration would be silently unconfigurable.
        #expect(Mirror(reflecting: ServerConfiguration()).children.count == ServerConfiguration.fields.count)
        #expect(Mirror(reflecting: LogConfiguration()).children.count == LogConfiguration.fields.count)
        #expect(Mirror(reflecting: SourceConfiguration()).children.count == SourceConfiguration.fields.count)
        #expect(Mirror(reflecting: LimitsConfiguration()).children.count == LimitsConfiguration.fields.count)
        #expect(Mirror(reflecting: OriginConfiguration()).children.count == OriginConfiguration.fields.count)
        #expect(Mirror(reflecting: OutputConfiguration()).children.count == OutputConfiguration.fields.count)
        #expect(Mirror(reflecting: HTTPConfiguration()).children.count == HTTPConfiguration.fields.count)
        #expect(Mirror(reflecting: CacheConfiguration()).children.count == CacheConfiguration.fields.count)
        #expect(Mirror(reflecting: DebugConfiguration()).children.count == DebugConfiguration.fields.count)
        let keys = catalog.settings.map(\.key)
        #expect(Set(keys).count == keys.count)
    }

    @Test func theExampleFileIsValidAndHoldsTheDefaults() throws {
        let c = try load(catalog.exampleTOML())
        var expected = KilnConfiguration()
        expected.presets = c.presets
        expected.watermarks = c.watermarks
        #expect(c == expected)
        #expect(c.presets.chains.count == 1)
        // The watermark example names a file: commented out, so the example file starts as it is.
        #expect(c.watermarks.paths.isEmpty)
        #expect(catalog.exampleTOML().contains("# logo = \"/etc/kiln/logo.png\""))
    }
}
