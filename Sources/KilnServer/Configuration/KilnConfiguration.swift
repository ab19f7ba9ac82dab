import Kiln
import KilnCore
import KilnProcessing

/// Every setting of Kiln, typed: one value per section, read from the layered raw values
/// (`ConfigurationLoader`) and validated together. The master builds it at start and on SIGHUP;
/// workers build it from the master's snapshot.
public struct KilnConfiguration: Sendable, Equatable {
    public var server = ServerConfiguration()
    public var log = LogConfiguration()
    public var source = SourceConfiguration()
    public var limits = LimitsConfiguration()
    public var workerLimits = WorkerLimitsConfiguration()
    public var security = SecurityConfiguration()
    public var output = OutputConfiguration()
    public var presets = PresetConfiguration()
    public var http = HTTPConfiguration()
    public var cache = CacheConfiguration()
    public var debug = DebugConfiguration()

    /// Every declared key, in the order of docs/configuration.md's table: the unknown-key check, the help,
    /// `kiln config dump`, the table and `kiln.example.toml` all come from here.
    public static let catalog = SettingsCatalog(
        settings: ServerConfiguration.settings + LogConfiguration.settings + SourceConfiguration.settings
            + LimitsConfiguration.settings + WorkerLimitsConfiguration.settings + SecurityConfiguration.settings + HTTPConfiguration.settings + OutputConfiguration.settings
            + CacheConfiguration.settings + DebugConfiguration.settings,
        freeSections: [PresetConfiguration.section])

    /// Every default.
    public init() {}

    /// Checks the keys, then reads and validates every section.
    public init(_ values: ConfigValues) throws(ConfigError) {
        try KilnConfiguration.catalog.validateKeys(values)
        server = try ServerConfiguration(values)
        _ = try server.resolvedPeerSecret(origin: values.origin)  // the file is read again by each worker
        log = try LogConfiguration(values)
        source = try SourceConfiguration(values)
        limits = try LimitsConfiguration(values)
        workerLimits = try WorkerLimitsConfiguration(values)
        security = try SecurityConfiguration(values)
        try security.resolve(origin: values.origin)
        output = try OutputConfiguration(values)
        presets = PresetConfiguration(values)
        http = try HTTPConfiguration(values)
        output.autoFormats = http.autoFormats   // typed, for the pipeline and the cache key
        cache = try CacheConfiguration(values)
        debug = try DebugConfiguration(values)
    }

    /// The pipeline's part, with the build's custom processors; checks every preset.
    public func pipeline(processors: ProcessorRegistry = ProcessorRegistry()) throws(ConfigError) -> PipelineConfiguration {
        try PipelineConfiguration(source: source, limits: limits, output: output, presets: presets, processors: processors)
    }
}
