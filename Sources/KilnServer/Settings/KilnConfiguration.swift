import KilnHTTP
import KilnPipeline
import KilnModel
import KilnProcessing
import KilnHTTP
import KilnOrigins
import KilnPOSIX
import KilnTracing

/// Every setting of Kiln, typed: one value per section, read from the layered raw values
/// (`ConfigurationLoader`) and validated together. The master builds it at start and on SIGHUP;
/// workers build it from the master's snapshot.
public struct KilnConfiguration: Sendable, Equatable {
    public var server = ServerConfiguration()
    public var log = LogConfiguration()
    public var source = SourceConfiguration()
    public var origins = OriginConfiguration()
    public var limits = LimitsConfiguration()
    public var workerLimits = WorkerLimitsConfiguration()
    public var allowLists = AllowListConfiguration()
    public var security = SecurityConfiguration()
    public var adapters = AdapterConfiguration()
    public var output = OutputConfiguration()
    public var presets = PresetConfiguration()
    public var watermarks = WatermarkConfiguration()
    public var http = HTTPConfiguration()
    public var fallback = FallbackConfiguration()
    public var cache = CacheConfiguration()
    /// `cache.shared*`: the shared result store.
    public var shared = SharedStoreConfiguration()
    public var debug = DebugConfiguration()
    public var purge = PurgeConfiguration()
    public var tracing = TracingConfiguration()

    /// Every declared key, in the order of docs/configuration.md's table: the unknown-key check, the help,
    /// `kiln config dump`, the table and `kiln.example.toml` all come from here.
    public static let catalog = SettingsCatalog(
        settings: ServerConfiguration.settings + LogConfiguration.settings + SourceConfiguration.settings + OriginConfiguration.settings
            + LimitsConfiguration.settings + WorkerLimitsConfiguration.settings + AllowListConfiguration.settings
            + SecurityConfiguration.settings + AdapterConfiguration.settings + HTTPConfiguration.settings + FallbackConfiguration.settings + OutputConfiguration.settings
            + CacheConfiguration.settings + SharedStoreConfiguration.settings + PurgeConfiguration.settings
            + TracingConfiguration.settings + DebugConfiguration.settings,
        freeSections: [PresetConfiguration.section, WatermarkConfiguration.section])

    /// Every default.
    public init() {}

    /// Checks the keys, then reads and validates every section.
    public init(_ values: ConfigValues) throws(ConfigError) {
        try KilnConfiguration.catalog.validateKeys(values)
        server = try ServerConfiguration(values)
        _ = try server.resolvedPeerSecret(origin: values.origin)  // the file is read again by each worker
        log = try LogConfiguration(values)
        source = try SourceConfiguration(values)
        origins = try OriginConfiguration(values)
        limits = try LimitsConfiguration(values)
        workerLimits = try WorkerLimitsConfiguration(values)
        allowLists = try AllowListConfiguration(values)
        security = try SecurityConfiguration(values)
        try security.resolve(origin: values.origin)
        adapters = try AdapterConfiguration(values)
        try adapters.validate(origin: values.origin)
        output = try OutputConfiguration(values)
        presets = PresetConfiguration(values)
        watermarks = WatermarkConfiguration(values)
        http = try HTTPConfiguration(values)
        fallback = try FallbackConfiguration(values)
        cache = try CacheConfiguration(values)
        shared = try SharedStoreConfiguration(values)
        debug = try DebugConfiguration(values)
        purge = try PurgeConfiguration(values)
        tracing = try TracingConfiguration(values)
    }

    /// The URL adapters switched on, with the HTTP origins an absolute source URL may name (an
    /// S3 origin has no URL a page would write).
    public var urlAdapters: URLAdapters {
        adapters.adapters(origins: origins.origins.filter { $0.kind == .http }.map { AdapterOrigin(name: $0.name, baseURL: $0.baseURL) })
    }

    /// The pipeline's part, with the build's custom processors and the remote origins (when
    /// `source.origins` names any); checks every preset. `sharedState`: the file the workers share
    /// origin limits through (nil: this process keeps its own).
    public func pipeline(processors: ProcessorRegistry = ProcessorRegistry(),
                         sharedState: RecordLockFile? = nil) throws(ConfigError) -> PipelineConfiguration {
        var configuration = try PipelineConfiguration(source: source, limits: limits, output: output, presets: presets,
                                                      watermarks: watermarks, processors: processors)
        configuration.sleepDecode = debug.sleepDecode
        if !origins.origins.isEmpty {
            configuration.sources = OriginSources(origins, maxFileBytes: limits.maxFileBytes, sharedState: sharedState,
                                                  workers: server.workers)
        }
        return configuration
    }
}
