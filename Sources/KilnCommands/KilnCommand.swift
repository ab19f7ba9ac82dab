import KilnOrigins
import KilnHTTP
import ArgumentParser
import Glibc
import KilnPipeline
import KilnConfigFile
import KilnModel
import KilnServer
import Logging
import KilnPOSIX

public struct KilnCommand: ParsableCommand {
    public init() {}

    public static let configuration = CommandConfiguration(
        commandName: "kiln",
        abstract: "A server-side image pipeline behind nginx (FastCGI).",
        subcommands: [Serve.self, ProcessCommand.self, CacheCommand.self, WarmCommand.self, SignCommand.self, SrcsetCommand.self, HealthCommand.self, ReloadCommand.self, ConfigCommand.self, VersionCommand.self, BenchResampleCommand.self, BenchPlanCommand.self])
}

/// Options shared by `serve`, `process`, `cache`, `warm` and `config dump`. Each named
/// flag is one declared setting (its help comes from the declaration); `--set` sets any.
struct SettingsOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: ArgumentHelp("TOML settings file ([server] workers = 4, ...; see kiln.example.toml).", valueName: "file"))
    var config: String?

    @Option(help: SettingsOptions.help(ServerConfiguration.Key.listen.info, valueName: "address"))
    var listen: String?

    @Option(help: SettingsOptions.help(ServerConfiguration.Key.workers.info, valueName: "n"))
    var workers: String?

    @Option(help: SettingsOptions.help(SourceConfiguration.Key.root.info, valueName: "dir"))
    var root: String?

    @Option(name: .customLong("socket-mode"), help: SettingsOptions.help(ServerConfiguration.Key.socketMode.info, valueName: "mode"))
    var socketMode: String?

    @Option(name: .customLong("socket-group"), help: SettingsOptions.help(ServerConfiguration.Key.socketGroup.info, valueName: "group"))
    var socketGroup: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Any setting, repeatable: --set server.max_requests=1000 (keys: kiln serve --help, kiln config dump).", valueName: "section.key=value"))
    var settings: [String] = []

    @Option(name: .customLong("log-level"), help: SettingsOptions.help(LogConfiguration.Key.level.info, valueName: "level"))
    var logLevel: String?

    /// `server.listen: <doc> (<type>, default ...)`, from the declaration.
    static func help(_ s: SettingInfo, valueName: String) -> ArgumentHelp {
        ArgumentHelp("\(s.key): \(s.doc.replacingBackticks()) (\(s.type), default \(s.defaultText)).", valueName: valueName)
    }

    /// Flags as settings; the named flags win over `--set`.
    func overrides() throws(ConfigError) -> [ConfigOverride] {
        var out: [ConfigOverride] = []
        for s in settings { out.append(try ConfigOverride(assignment: s)) }
        if let listen { out.append(ConfigOverride(ServerConfiguration.Key.listen, value: listen)) }
        if let workers { out.append(ConfigOverride(ServerConfiguration.Key.workers, value: workers)) }
        if let root { out.append(ConfigOverride(SourceConfiguration.Key.root, value: root)) }
        if let socketMode { out.append(ConfigOverride(ServerConfiguration.Key.socketMode, value: socketMode)) }
        if let socketGroup { out.append(ConfigOverride(ServerConfiguration.Key.socketGroup, value: socketGroup)) }
        if let logLevel { out.append(ConfigOverride(LogConfiguration.Key.level, value: logLevel)) }
        return out
    }
}

/// Every validated setting of one start (or reload): the raw layered values (what workers
/// receive) and the typed configuration read from them.
struct Settings {
    var values: ConfigValues
    var configuration: KilnConfiguration

    var server: ServerConfiguration { configuration.server }
    var log: LogConfiguration { configuration.log }

    /// defaults < file < environment < flags, then every section validates its part.
    static func load(_ options: SettingsOptions) throws(ConfigError) -> Settings {
        let values = try ConfigurationLoader(catalog: KilnConfiguration.catalog).load(file: options.config,
                                                    environment: ConfigurationLoader.processEnvironment(),
                                                    overrides: try options.overrides())
        let settings = Settings(values: values, configuration: try KilnConfiguration(values))
        try HandlerFactory(processors: BuildProcessors.registry).validate(settings.configuration)
        return settings
    }

    /// `loadOrExit` for the commands that use the server's disk cache (`cache`, `warm`): when no
    /// setting names a folder and the default one (`kiln-cache` in the working folder) does not
    /// exist, there is no disk cache to use: tools never create the default folder elsewhere.
    static func loadForTools(_ options: SettingsOptions) throws -> Settings {
        var settings = try loadOrExit(options)
        let caching = settings.configuration.cache
        var st = stat()
        if caching.diskEnabled, caching.diskPathIsDefault, stat(caching.diskPath, &st) != 0 {
            settings.configuration.cache.diskPath = ""
        }
        return settings
    }

    /// Why a tool has no disk cache to use.
    static let noDiskCache = "no disk cache: cache.disk_path is empty, or the default folder (kiln-cache in the working folder, or $CACHE_DIRECTORY) does not exist here; "
        + "run where kiln serve runs, or set cache.disk_path (--set cache.disk_path=/var/cache/kiln, KILN_CACHE_DISK_PATH or the [cache] section)"

    /// `load`, or the one-line error on stderr and exit status 2.
    static func loadOrExit(_ options: SettingsOptions) throws -> Settings {
        do {
            return try load(options)
        } catch {
            Diagnostics.fail("invalid configuration: \(error)")
            throw ExitCode(2)
        }
    }
}

extension String {
    /// Help text without markdown backticks.
    func replacingBackticks() -> String { String(filter { $0 != "`" }) }
}

enum Diagnostics {
    /// One line on stderr, before logging is set up.
    static func fail(_ message: String) {
        writeStderr("kiln: \(message)\n")
    }

    static func writeStderr(_ text: String) {
        try? FileDescriptorIO.writeAll(2, Array(text.utf8))
    }

    /// swift-log to stderr once per process (`LogLineHandler`: `log.format`, the request id on
    /// lines about a request, `log.access`): at `log.level`, or `level` when given.
    static func bootstrapLogging(_ log: LogConfiguration, level: Logger.Level? = nil, role: String) -> Logger {
        LogLineHandler.bootstrap(log, level: level, role: role)
    }

    /// The same with the default `[log]` settings but `level` (the cache and warm commands).
    static func bootstrapLogging(_ level: Logger.Level, role: String) -> Logger {
        LogLineHandler.bootstrap(LogConfiguration(), level: level, role: role)
    }
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the master: listen, start the workers, supervise them.",
        discussion: """
        Signals: SIGTERM/SIGINT/SIGQUIT stop (requests in flight finish, up to server.shutdown_timeout), \
        SIGHUP reloads the configuration (file and environment) and replaces the workers.

        Settings (--set section.key=value, KILN_<SECTION>_<KEY>, or key = value under [section] in the \
        TOML file; precedence defaults < file < environment < flags). Counts are plain numbers \
        (50_000_000 is fine); sizes take B, KiB, MiB, GiB (KB, MB, GB are the same powers of 1024); \
        durations need a unit: 500ms, 10s, 2m, 1h. Every key with its default, type and meaning:


        """ + KilnConfiguration.catalog.helpText().replacingBackticks())

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let settings = try Settings.loadOrExit(options)
        let logger = Diagnostics.bootstrapLogging(settings.log, role: "master")
        // Workers are `kiln-worker` (next to this executable: no TOML, Foundation or ArgumentParser,
        // half the memory); they take their settings from the snapshot the master passes on fd 3
        // (validated here, unchanged until SIGHUP), not from the file again.
        let workerPath: String
        do {
            workerPath = try Master.workerExecutable(named: "kiln-worker")
        } catch {
            Diagnostics.fail("\(error)")
            throw ExitCode(2)
        }
        let workerArguments = ["kiln-worker", "--master-pid", String(getpid()),
                               "--settings-fd", String(SettingsSnapshot.workerFD)]
        let options = self.options
        let shadowed = ShadowedRestartKeys(options)
        let master = Master(configuration: settings.server, workerLimits: settings.configuration.workerLimits, values: settings.values,
                            workerArguments: workerArguments, executablePath: workerPath, logger: logger) {
            let reloaded = try Settings.load(options)
            for line in shadowed.changes(effective: reloaded.values) { logger.warning("\(line)") }
            return (reloaded.server, reloaded.values)
        }
        let status: Int32
        do {
            status = try master.run()
        } catch {
            Diagnostics.fail("\(error)")
            throw ExitCode(2)
        }
        throw ExitCode(status)
    }
}

struct ProcessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "process",
        abstract: "Render one image from a file, as the server would: kiln process in.jpg rs:300:200:fill/f:webp out.webp")

    @Argument(help: "Source image file.") var input: String
    @Argument(help: "Processing spec, as in the URL without the source path (e.g. rs:300:0/q:80); \"-\" for none.") var spec: String
    @Argument(help: "Output file.") var output: String
    @OptionGroup var options: SettingsOptions

    func run() throws {
        let settings = try Settings.loadOrExit(options)
        let logger = Diagnostics.bootstrapLogging(settings.log, role: "process")
        let status = ProcessFile.process(input: input, spec: spec, output: output, configuration: settings.configuration, logger: logger)
        throw ExitCode(status)
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the version.")

    func run() {
        print("kiln \(kilnVersion)")
    }
}
