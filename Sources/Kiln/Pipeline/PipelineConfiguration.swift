import KilnCore
import KilnProcessing
import KilnSystem
import Logging

/// Every setting the pipeline reads, validated together at start-up, and the custom processors
/// the build registered (their names are URL options).
public struct PipelineConfiguration: Sendable {
    public var source: SourceConfiguration
    public var limits: LimitsConfiguration
    public var output: OutputConfiguration
    public var presets: PresetConfiguration
    /// Custom processors (`Sources/kiln/CustomProcessors.swift` in the standard build).
    public var processors: ProcessorRegistry
    /// The file the workers share origin limits through (the master's, on fd 5 of each worker);
    /// nil: each process keeps its own (`kiln process`, `kiln warm`, tests).
    public var sharedState: RecordLockFile?

    /// Every setting the pipeline reads (the `[source]`, `[limits]` and `[output]` declarations).
    public static var settings: [SettingInfo] { SourceConfiguration.settings + LimitsConfiguration.settings + OutputConfiguration.settings }

    public init(_ values: ConfigValues, processors: ProcessorRegistry = ProcessorRegistry()) throws(ConfigError) {
        try self.init(source: try SourceConfiguration(values), limits: try LimitsConfiguration(values),
                      output: try OutputConfiguration(values), presets: PresetConfiguration(values), processors: processors)
    }

    /// From typed sections; checks every preset.
    public init(source: SourceConfiguration = SourceConfiguration(), limits: LimitsConfiguration = LimitsConfiguration(),
                output: OutputConfiguration = OutputConfiguration(), presets: PresetConfiguration = PresetConfiguration(),
                processors: ProcessorRegistry = ProcessorRegistry()) throws(ConfigError) {
        self.source = source
        self.limits = limits
        self.output = output
        self.presets = presets
        self.processors = processors
        try presets.validate(with: parser)
    }

    /// The standard pipeline over `source.root`. Fails when the root is not a folder.
    /// `renderTimeout` (`limits.render_timeout`) bounds origin fetches: a fetch never runs past it.
    public func makePipeline(renderTimeout: Double = 0) throws(ConfigError) -> ImagePipeline {
        let files: FileSource
        do {
            files = try FileSource(root: source.root, maxFileBytes: limits.maxFileBytes)
        } catch {
            throw .invalid(key: "source.root", value: source.root, expected: "an existing folder", origin: "")
        }
        let traffic = source.origins.isEmpty ? nil : OriginTraffic()
        let sources = try sourceStage(local: files, traffic: traffic, renderTimeout: renderTimeout)
        var stages: PipelineStages
        do {
            stages = try .standard(source: sources, processors: ProcessorFactory(registry: processors))
        } catch {
            throw .unavailable("\(error)")
        }
        stages.originTraffic = traffic
        return ImagePipeline(stages: stages, limits: limits, output: output)
    }

    /// The standard pipeline over `source.root` with the caches of `cache` (a memory cache, and a
    /// disk cache with render locks when `disk_path` is set); sources go through the disk cache
    /// when `cache.store` keeps originals. `renderTimeout` (`limits.render_timeout`) is announced in
    /// the render locks, so waiters keep waiting for a slow render within its deadline.
    public func makePipeline(cache: CacheConfiguration, renderTimeout: Double = 0, logger: Logger) throws(ConfigError) -> ImagePipeline {
        let plain = try makePipeline(renderTimeout: renderTimeout)
        let coordinator = RenderCoordinator(cache, renderTimeout: renderTimeout, logger: logger)
        return ImagePipeline(stages: plain.stages, limits: limits, output: output, cache: coordinator)
            .keepingOriginals(in: coordinator.disk, store: cache.store)
    }

    /// `local` alone, or a `SourceRouter` over it and the remote origins of `source.origins`,
    /// which record their fetches in `traffic` and end them before `renderTimeout`. S3 origins are
    /// addressed at `source.s3_endpoint` and sign their GETs (`S3Access`: throws when there are no
    /// credentials).
    func sourceStage(local: FileSource, traffic: OriginTraffic?, renderTimeout: Double) throws(ConfigError) -> any SourceLoading {
        guard !source.origins.isEmpty else { return local }
        let fetcher = HTTPFetcher(connectTimeout: source.connectTimeout, timeout: source.fetchTimeout,
                                  maxRedirects: source.maxRedirects, maxBytes: limits.maxFileBytes)
        let policy = OriginAddressPolicy(allowedNetworks: source.allowedNetworks)
        let limits = source.originLimits
        let state = limits.isUnlimited ? nil : (sharedState ?? RecordLockFile.anonymous())
        let signer = source.origins.contains { $0.kind == .s3 } ? try S3Access.signer(for: source) : nil
        // A signed request is for one host: S3 origins follow no redirect (its headers, the
        // session token among them, would go along; the signature would not match there anyway).
        var s3Fetcher = fetcher
        s3Fetcher.maxRedirects = 0
        let remotes = source.origins.enumerated().map { index, origin in
            let isS3 = origin.kind == .s3
            return RemoteSource(origin: isS3 ? origin.addressed(at: source.s3EndpointURL) : origin,
                                fetcher: isS3 ? s3Fetcher : fetcher, policy: policy, revalidateAfter: source.revalidateAfter,
                                gate: state.map { OriginGate(file: $0, index: index, limits: limits) },
                                traffic: traffic, negativeTTL: source.negativeTTL, renderTimeout: renderTimeout,
                                signer: isS3 ? signer : nil)
        }
        return SourceRouter(local: local, remotes: remotes)
    }

    /// The parser with this configuration's limits and presets.
    public var parser: SpecParser {
        SpecParser(maxDimension: limits.maxDimension, maxOperations: limits.maxOperations,
                   maxSigma: Double(limits.maxBlurSigma), maxPathBytes: limits.maxPathBytes, maxOptions: limits.maxOptions,
                   presets: presets.chains, customResolver: processors.resolver)
    }
}
