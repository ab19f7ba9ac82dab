import Kiln
import KilnCore
import KilnProcessing
import Logging

/// The composition root of a worker: builds what it serves with from typed configuration (the
/// standard pipeline, which owns its caches, behind the `ImageHandler`), with the custom
/// processors of the build.
public struct HandlerFactory: Sendable {
    /// Custom processors (`Sources/kiln/CustomProcessors.swift` in the standard build).
    public var processors: ProcessorRegistry

    public init(processors: ProcessorRegistry = ProcessorRegistry()) {
        self.processors = processors
    }

    /// Settings the handler reads, registered with the configuration loader (unknown keys are errors).
    public static let knownKeys: Set<String> = PipelineConfiguration.keys.union(HTTPConfiguration.keys)
        .union(CacheConfiguration.keys).union([EchoHandler.settingKey])

    /// Runs in the master before any worker starts (and on SIGHUP): throw to refuse the settings.
    public func validate(_ values: ConfigValues) throws(ConfigError) {
        _ = try HTTPConfiguration(values)
        _ = try CacheConfiguration(values)
        _ = try PipelineConfiguration(values, processors: processors).makePipeline()
    }

    /// Runs once in each worker: the image handler, or the echo handler of the process tests
    /// when `debug.echo_handler` is on.
    public func makeHandler(_ values: ConfigValues, _ logger: Logger) throws -> any RequestHandling {
        if try values.bool(EchoHandler.settingKey, default: false) {
            logger.warning("\(EchoHandler.settingKey) is on: answering with the worker PID, not rendering")
            return EchoHandler()
        }
        return try makeImageHandler(values, logger)
    }

    /// `makeImageHandler(pipeline:cache:http:logger:)` with the configurations of `values`.
    public func makeImageHandler(_ values: ConfigValues, _ logger: Logger) throws -> ImageHandler {
        try makeImageHandler(pipeline: PipelineConfiguration(values, processors: processors),
                             cache: CacheConfiguration(values), http: HTTPConfiguration(values), logger: logger)
    }

    /// The image handler of a worker, also used by `kiln warm` (one per thread): the standard
    /// pipeline with its caches; sources go through the disk cache when `cache.store` keeps originals.
    public func makeImageHandler(pipeline: PipelineConfiguration, cache: CacheConfiguration,
                                 http: HTTPConfiguration, logger: Logger) throws -> ImageHandler {
        ImageHandler(pipeline: try pipeline.makePipeline(cache: cache, logger: logger),
                     parser: pipeline.parser, http: http, logger: logger)
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
           let format = ImageFormat(fileExtension: String(ext)) {
            request.output.format = .format(format)
        }
        return try configuration.makePipeline().render(request)
    }
}
