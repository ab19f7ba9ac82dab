import KilnModel
import KilnProcessing
import Logging

/// Every setting the pipeline reads, validated together at start-up, and the custom processors
/// the build registered (their names are URL options).
public struct PipelineConfiguration: Sendable {
    public var source: SourceConfiguration
    public var limits: LimitsConfiguration
    public var output: OutputConfiguration
    public var presets: PresetConfiguration
    /// `[watermarks]`: the files `wm:` draws, decoded by `makePipeline`.
    public var watermarks: WatermarkConfiguration
    /// Custom processors (`Sources/kiln-cli/CustomProcessors.swift` in the standard build).
    public var processors: ProcessorRegistry
    /// Adds sources beside the local folder (KilnOrigins' remote origins); nil: local files only.
    public var sources: (any SourceStageBuilding)?
    /// Decodes sleep as their source asks (`SleepingDecoders`, `debug.sleep_decode`): tests only.
    public var sleepDecode = false

    /// Every setting the pipeline reads (its `[source]`, `[limits]` and `[output]` declarations).
    public static var settings: [SettingInfo] { SourceConfiguration.settings + LimitsConfiguration.settings + OutputConfiguration.settings }

    public init(_ values: ConfigValues, processors: ProcessorRegistry = ProcessorRegistry()) throws(ConfigError) {
        try self.init(source: try SourceConfiguration(values), limits: try LimitsConfiguration(values),
                      output: try OutputConfiguration(values), presets: PresetConfiguration(values),
                      watermarks: WatermarkConfiguration(values), processors: processors)
    }

    /// From typed sections; checks every preset and watermark name (the files are read by `makePipeline`).
    public init(source: SourceConfiguration = SourceConfiguration(), limits: LimitsConfiguration = LimitsConfiguration(),
                output: OutputConfiguration = OutputConfiguration(), presets: PresetConfiguration = PresetConfiguration(),
                watermarks: WatermarkConfiguration = WatermarkConfiguration(),
                processors: ProcessorRegistry = ProcessorRegistry()) throws(ConfigError) {
        self.source = source
        self.limits = limits
        self.output = output
        self.presets = presets
        self.watermarks = watermarks
        self.processors = processors
        try watermarks.validate()
        try presets.validate(with: parser)
    }

    /// The standard pipeline over `source.root` (and `sources`' additions), with the watermarks
    /// read and decoded. Fails when the root is not a folder or a watermark file does not decode. `renderTimeout` (`limits.render_timeout`) bounds remote reads.
    public func makePipeline(renderTimeout: Double = 0) throws(ConfigError) -> ImagePipeline {
        let files: FileSource
        do {
            files = try FileSource(root: source.root, maxFileBytes: limits.maxFileBytes)
        } catch {
            throw .invalid(key: "source.root", value: source.root, expected: "an existing folder", origin: "")
        }
        let built = try sources?.sourceStage(local: files, renderTimeout: renderTimeout) ?? BuiltSourceStage(source: files)
        var stages: PipelineStages
        do {
            stages = try .standard(source: built.source, processors: ProcessorFactory(registry: processors))
        } catch {
            throw .unavailable("\(error)")
        }
        stages.sourceActivity = built.activity
        stages.sourceSharing = built.sharing
        stages.watermarks = try watermarks.load(with: stages, limits: limits.decodeLimits, maxFileBytes: limits.maxFileBytes)
        stages.processors = ProcessorFactory(registry: processors, watermarks: stages.watermarks)
        if sleepDecode {
            stages.decoders = SleepingDecoders(wrapping: stages.decoders)
            stages.animations = SleepingAnimations(wrapping: stages.animations)
        }
        return ImagePipeline(stages: stages, limits: limits, output: output)
    }

    /// The standard pipeline over `source.root` with the caches of `cache` (a memory cache, and a
    /// disk cache with render locks when `disk_path` is set); sources go through the disk cache
    /// when `cache.store` keeps originals. `renderTimeout` (`limits.render_timeout`) is announced in
    /// the render locks, so waiters keep waiting for a slow render within its deadline. `shared`:
    /// the shared result store behind the local caches (`cache.shared`), nil for none.
    public func makePipeline(cache: CacheConfiguration, renderTimeout: Double = 0, shared: (any SharedCaching)? = nil,
                             logger: Logger) throws(ConfigError) -> ImagePipeline {
        let plain = try makePipeline(renderTimeout: renderTimeout)
        let coordinator = RenderCoordinator(cache, renderTimeout: renderTimeout, shared: shared, logger: logger)
        return ImagePipeline(stages: plain.stages, limits: limits, output: output, cache: coordinator)
            .keepingOriginals(in: coordinator.diskCache, store: cache.store)
    }

    /// The parser with this configuration's limits and presets.
    public var parser: SpecParser {
        SpecParser(maxDimension: limits.maxDimension, maxOperations: limits.maxOperations,
                   maxSigma: Double(limits.maxBlurSigma), maxPathBytes: limits.maxPathBytes, maxOptions: limits.maxOptions,
                   presets: presets.chains, watermarks: watermarks.names, customResolver: processors.resolver)
    }
}
