import ArgumentParser
import Glibc
import KilnCore
import KilnServer
import Logging

struct KilnCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kiln",
        abstract: "A server-side image pipeline behind nginx (FastCGI).",
        subcommands: [Serve.self, WorkerCommand.self, ProcessCommand.self, CacheCommand.self, WarmCommand.self, VersionCommand.self])
}

/// Options shared by `serve`, `worker` and `process`. Each flag is one setting; `--set` sets any.
struct SettingsOptions: ParsableArguments {
    @Option(name: .customLong("config"), help: ArgumentHelp("INI settings file ([server] workers = 4, ...).", valueName: "file"))
    var config: String?

    @Option(help: ArgumentHelp("server.listen: unix:/path/kiln.sock or 127.0.0.1:9000 (default unix:/tmp/kiln.sock).", valueName: "address"))
    var listen: String?

    @Option(help: ArgumentHelp("server.workers: worker processes, 1...256 (default: one per core).", valueName: "n"))
    var workers: String?

    @Option(help: ArgumentHelp("source.root: folder images are read from.", valueName: "dir"))
    var root: String?

    @Option(name: .customLong("socket-mode"), help: ArgumentHelp("server.socket_mode: octal mode of a unix socket (default 0660).", valueName: "mode"))
    var socketMode: String?

    @Option(name: .customLong("set"), help: ArgumentHelp("Any setting, repeatable: --set server.max_requests=1000.", valueName: "section.key=value"))
    var settings: [String] = []

    @Option(name: .customLong("log-level"), help: ArgumentHelp("log.level: trace, debug, info, notice, warning, error, critical (default info).", valueName: "level"))
    var logLevel: String?

    /// Flags as settings; the named flags win over `--set`.
    func overrides() throws(ConfigError) -> [ConfigOverride] {
        var out: [ConfigOverride] = []
        for s in settings { out.append(try ConfigOverride(assignment: s)) }
        if let listen { out.append(ConfigOverride(key: "server.listen", value: listen, origin: "--listen")) }
        if let workers { out.append(ConfigOverride(key: "server.workers", value: workers, origin: "--workers")) }
        if let root { out.append(ConfigOverride(key: "source.root", value: root, origin: "--root")) }
        if let socketMode { out.append(ConfigOverride(key: "server.socket_mode", value: socketMode, origin: "--socket-mode")) }
        if let logLevel { out.append(ConfigOverride(key: "log.level", value: logLevel, origin: "--log-level")) }
        return out
    }
}

/// Every validated setting of one start (or reload).
struct Settings {
    var values: ConfigValues
    var server: ServerConfiguration
    var log: LogConfiguration

    /// Every key a component registered.
    static let knownKeys = ServerConfiguration.keys.union(LogConfiguration.keys).union(HandlerFactory.knownKeys)

    /// defaults < file < environment < flags, then every component validates its part.
    static func load(_ options: SettingsOptions) throws(ConfigError) -> Settings {
        let loader = ConfigurationLoader(knownKeys: knownKeys)
        let values = try loader.load(file: options.config,
                                     environment: ConfigurationLoader.processEnvironment(),
                                     overrides: try options.overrides())
        let settings = Settings(values: values, server: try ServerConfiguration(values), log: try LogConfiguration(values))
        try HandlerFactory(processors: CustomProcessors.registry).validate(values)
        return settings
    }

    /// `load`, or the one-line error on stderr and exit status 2.
    static func loadOrExit(_ options: SettingsOptions) throws -> Settings {
        do {
            return try load(options)
        } catch {
            Diagnostics.fail("invalid configuration: \(error)")
            throw ExitCode(2)
        }
    }

    /// A worker's settings: the master's validated snapshot on `fd` when given, else `load`.
    static func loadWorkerOrExit(_ options: SettingsOptions, snapshotFD fd: Int32?) throws -> Settings {
        guard let fd else { return try loadOrExit(options) }
        do {
            let values = try SettingsSnapshot.read(fd: fd)
            try ConfigurationLoader(knownKeys: knownKeys).validateKeys(values)
            return Settings(values: values, server: try ServerConfiguration(values), log: try LogConfiguration(values))
        } catch {
            Diagnostics.fail("invalid configuration: \(error)")
            throw ExitCode(2)
        }
    }
}

enum Diagnostics {
    /// One line on stderr, before logging is set up.
    static func fail(_ message: String) {
        writeStderr("kiln: \(message)\n")
    }

    static func writeStderr(_ text: String) {
        var bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeMutableBytes { write(2, $0.baseAddress! + off, $0.count - off) }
            if n <= 0 { return }
            off += n
        }
    }

    /// swift-log to stderr at `level`, once per process.
    static func bootstrapLogging(_ level: Logger.Level, role: String) -> Logger {
        LoggingSystem.bootstrap { label in
            var h = StreamLogHandler.standardError(label: label)
            h.logLevel = level
            return h
        }
        var logger = Logger(label: "kiln.\(role)")
        logger[metadataKey: "pid"] = "\(getpid())"
        return logger
    }
}

struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Start the master: listen, start the workers, supervise them.",
        discussion: """
        Signals: SIGTERM/SIGINT/SIGQUIT stop (requests in flight finish, up to server.shutdown_timeout), \
        SIGHUP reloads the configuration and replaces the workers.
        """)

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let settings = try Settings.loadOrExit(options)
        let logger = Diagnostics.bootstrapLogging(settings.log.level, role: "master")
        let args = CommandLine.arguments
        // `worker` + our own arguments; the worker takes its settings from the snapshot the master
        // passes on fd 3 (validated here, unchanged until SIGHUP), not from the file again.
        let ownArguments = Array(args.dropFirst().drop { $0 != "serve" }.dropFirst())
        let workerArguments = [args.first ?? "kiln", "worker", "--master-pid", String(getpid()),
                               "--settings-fd", String(SettingsSnapshot.workerFD)] + ownArguments
        let options = self.options
        let master = Master(configuration: settings.server, values: settings.values,
                            workerArguments: workerArguments, logger: logger) {
            let reloaded = try Settings.load(options)
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

struct WorkerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "worker",
        abstract: "A worker process (started by `kiln serve` with the listening socket on fd 0).",
        shouldDisplay: false)

    @OptionGroup var options: SettingsOptions

    @Option(name: .customLong("master-pid"), help: .hidden)
    var masterPID: Int32?

    @Option(name: .customLong("settings-fd"), help: .hidden)
    var settingsFD: Int32?

    func run() throws {
        Worker.installStopHandler()
        let settings = try Settings.loadWorkerOrExit(options, snapshotFD: settingsFD)
        let logger = Diagnostics.bootstrapLogging(settings.log.level, role: "worker")
        let worker = Worker(configuration: settings.server, values: settings.values, masterPID: masterPID, logger: logger)
        let status = worker.run(makeHandler: HandlerFactory(processors: CustomProcessors.registry).makeHandler)
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
        let logger = Diagnostics.bootstrapLogging(settings.log.level, role: "process")
        let status = ProcessFile.process(input: input, spec: spec, output: output, values: settings.values, logger: logger)
        throw ExitCode(status)
    }
}

struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "version", abstract: "Print the version.")

    func run() {
        print("kiln \(kilnVersion)")
    }
}
