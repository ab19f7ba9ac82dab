import KilnHTTP
import KilnOrigins
import KilnPipeline
import KilnModel
import KilnProcessing
import KilnPOSIX
import Logging

/// The composition root of a worker: builds what it serves with from typed configuration (the
/// standard pipeline, which owns its caches, behind the `ImageHandler`), with the custom
/// processors of the build.
public struct HandlerFactory: Sendable {
    /// Custom processors (`Sources/kiln-cli/CustomProcessors.swift` in the standard build).
    public var processors: ProcessorRegistry
    /// A lookup lane worker's handler (`kiln-worker --lookup 1`): answers from the caches, hands
    /// every miss to the render workers (`RenderCoordinator.lookupOnly`, `RenderHandOff`).
    public var lookupOnly = false

    public init(processors: ProcessorRegistry = ProcessorRegistry(), lookupOnly: Bool = false) {
        self.processors = processors
        self.lookupOnly = lookupOnly
    }

    /// Runs in the master before any worker starts (and on SIGHUP): throw to refuse the settings
    /// (a missing root, a bad preset, a shared result store without credentials).
    public func validate(_ configuration: KilnConfiguration) throws(ConfigError) {
        // Without the disk cache: a check makes no folder (the default one is in the working folder).
        if configuration.server.lookupWorkers > 0, !configuration.cache.diskEnabled {
            throw ConfigError.invalid(key: ServerConfiguration.Key.lookupWorkers.key, value: String(configuration.server.lookupWorkers),
                                      expected: "0 without a disk cache (the lookup lane answers from the disk cache the render workers fill)", origin: "the disk cache setting")
        }
        var configuration = configuration
        configuration.cache.diskPath = ""
        let pipeline = try configuration.pipeline(processors: processors.addingSleepProcessor(if: configuration.debug.sleepProcessor)).makePipeline()
        try configuration.fallback.validate(with: pipeline)
        _ = try HandlerFactory.sharedStore(configuration, Logger(label: "kiln.shared"))
    }

    /// The shared result store of `configuration` (`cache.shared`), nil when none is configured.
    public static func sharedStore(_ configuration: KilnConfiguration, _ logger: Logger) throws(ConfigError) -> SharedResultStore? {
        try SharedResultStore.make(configuration.shared, origins: configuration.origins, logger: logger)
    }

    /// Runs once in each worker, with the master's validated values: the image handler, or the
    /// echo handler of the process tests when `debug.echo_handler` is on.
    public func makeHandler(_ configuration: KilnConfiguration, _ logger: Logger) throws -> any RequestHandling {
        configuration.debug.applyResampler(logger)
        if configuration.debug.echoHandler {
            logger.warning("\(DebugConfiguration.Key.echoHandler.key) is on: answering with the worker PID, not rendering")
            return EchoHandler()
        }
        let pipeline = try configuration.pipeline(
            processors: processors.addingSleepProcessor(if: configuration.debug.sleepProcessor),
            sharedState: RecordLockFile.attach(fd: Master.sharedStateWorkerFD, name: Master.sharedStateName))
        return try makeImageHandler(pipeline: pipeline, cache: configuration.cache, http: configuration.http,
                                    security: configuration.security, allowLists: configuration.allowLists,
                                    fallback: configuration.fallback, adapters: configuration.urlAdapters,
                                    renderTimeout: configuration.workerLimits.renderTimeout,
                                    shared: HandlerFactory.sharedStore(configuration, logger), logger: logger)
    }

    /// `makeImageHandler(pipeline:cache:http:logger:)` with the sections of `configuration`.
    public func makeImageHandler(_ configuration: KilnConfiguration, _ logger: Logger) throws -> ImageHandler {
        configuration.debug.applyResampler(logger)
        return try makeImageHandler(pipeline: configuration.pipeline(processors: processors.addingSleepProcessor(if: configuration.debug.sleepProcessor)),
                                    cache: configuration.cache, http: configuration.http,
                                    security: configuration.security, allowLists: configuration.allowLists,
                                    fallback: configuration.fallback, adapters: configuration.urlAdapters,
                                    renderTimeout: configuration.workerLimits.renderTimeout,
                                    shared: HandlerFactory.sharedStore(configuration, logger), logger: logger)
    }

    /// The image handler of a worker, also used by `kiln warm` (one per thread): the standard
    /// pipeline with its caches; sources go through the disk cache when `cache.store` keeps originals.
    /// `renderTimeout` is announced in render locks (waiters keep waiting within it). `shared`:
    /// the shared result store behind the local caches (`cache.shared`), nil for none.
    public func makeImageHandler(pipeline: PipelineConfiguration, cache: CacheConfiguration,
                                 http: HTTPConfiguration, security: SecurityConfiguration = SecurityConfiguration(),
                                 allowLists: AllowListConfiguration = AllowListConfiguration(),
                                 fallback: FallbackConfiguration = FallbackConfiguration(),
                                 adapters: URLAdapters = URLAdapters(),
                                 renderTimeout: Double = 0, shared: (any SharedCaching)? = nil,
                                 logger: Logger) throws -> ImageHandler {
        let made = try pipeline.makePipeline(cache: cache, renderTimeout: renderTimeout, shared: lookupOnly ? nil : shared, logger: logger)
        made.cache?.lookupOnly = lookupOnly
        return ImageHandler(pipeline: made,
                     gate: RequestGate(security: security, allowLists: allowLists, adapters: adapters, parser: pipeline.parser), http: http,
                     fallbacks: fallback.images, logger: logger)
    }

    /// `kiln process input spec output`: renders one file with the pipeline, without a server or
    /// caches. The input's folder is the root; without `f:` in the spec the output path's
    /// extension picks the format. Throws `ConfigError` or whatever the parser and pipeline throw.
    public func render(file input: String, spec: String, outputPath: String,
                       configuration: PipelineConfiguration) throws -> RenderedImage {
        var configuration = configuration
        let slash = input.lastIndex(of: "/")
        let folder = slash.map { String(input[..<$0]) } ?? "."
        let name = slash.map { String(input[input.index(after: $0)...]) } ?? input
        configuration.source.root = folder.isEmpty ? "/" : folder
        let trimmed = spec == "-" ? "" : spec.split(separator: "/").joined(separator: "/")
        var request = try configuration.parser.parse("/" + (trimmed.isEmpty ? "" : trimmed + "/") + "-/" + name, isDecoded: true)
        if request.output.format == .source, let ext = outputPath.split(separator: ".").last,
           let format = ImageFormat(fileExtension: String(ext)), format.isEncodable {
            request.output.format = .format(format)
        }
        return try configuration.makePipeline().render(request)
    }
}
