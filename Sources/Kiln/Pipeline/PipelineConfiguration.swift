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
    public func makePipeline() throws(ConfigError) -> ImagePipeline {
        let files: FileSource
        do {
            files = try FileSource(root: source.root, maxFileBytes: limits.maxFileBytes)
        } catch {
            throw .invalid(key: "source.root", value: source.root, expected: "an existing folder", origin: "")
        }
        let sources = try sourceStage(local: files)
        let stages: PipelineStages
        do {
            stages = try .standard(source: sources, processors: ProcessorFactory(registry: processors))
        } catch {
            throw .unavailable("\(error)")
        }
        return ImagePipeline(stages: stages, limits: limits, output: output)
    }

    /// The standard pipeline over `source.root` with the caches of `cache` (a memory cache, and a
    /// disk cache with render locks when `disk_path` is set); sources go through the disk cache
    /// when `cache.store` keeps originals. `renderTimeout` (`limits.render_timeout`) is announced in
    /// the render locks, so waiters keep waiting for a slow render within its deadline.
    public func makePipeline(cache: CacheConfiguration, renderTimeout: Double = 0, logger: Logger) throws(ConfigError) -> ImagePipeline {
        let plain = try makePipeline()
        let coordinator = RenderCoordinator(cache, renderTimeout: renderTimeout, logger: logger)
        return ImagePipeline(stages: plain.stages, limits: limits, output: output, cache: coordinator)
            .keepingOriginals(in: coordinator.disk, store: cache.store)
    }

    /// `local` alone, or a `SourceRouter` over it and the remote origins of `source.origins`.
    /// S3 origins are addressed at `source.s3_endpoint` and sign their GETs (`S3Access`: throws
    /// when there are no credentials).
    func sourceStage(local: FileSource) throws(ConfigError) -> any SourceLoading {
        guard !source.origins.isEmpty else { return local }
        let fetcher = HTTPFetcher(connectTimeout: source.connectTimeout, timeout: source.fetchTimeout,
                                  maxRedirects: source.maxRedirects, maxBytes: limits.maxFileBytes)
        let policy = OriginAddressPolicy(allowedNetworks: source.allowedNetworks)
        let signer = source.origins.contains { $0.kind == .s3 } ? try S3Access.signer(for: source) : nil
        // A signed request is for one host: S3 origins follow no redirect (its headers, the
        // session token among them, would go along; the signature would not match there anyway).
        var s3Fetcher = fetcher
        s3Fetcher.maxRedirects = 0
        let remotes = source.origins.map {
            $0.kind == .s3
                ? RemoteSource(origin: $0.addressed(at: source.s3EndpointURL), fetcher: s3Fetcher, policy: policy,
                               revalidateAfter: source.revalidateAfter, signer: signer)
                : RemoteSource(origin: $0, fetcher: fetcher, policy: policy, revalidateAfter: source.revalidateAfter)
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
