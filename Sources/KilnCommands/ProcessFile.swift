import KilnOrigins
import KilnHTTP
import Glibc
import KilnPipeline
import KilnModel
import KilnServer
import Logging
import KilnPOSIX

/// `kiln process input spec output`: `HandlerFactory.render(file:…)`, then the file written.
enum ProcessFile {
    static func process(input: String, spec: String, output: String, configuration settings: KilnConfiguration, logger: Logger) -> Int32 {
        do {
            let factory = HandlerFactory(processors: BuildProcessors.registry)
            settings.debug.applyResampler(logger)
            let configuration = try settings.pipeline(processors: factory.processors)
            let rendered = try factory.render(file: input, spec: spec, outputPath: output, configuration: configuration)
            try writeFile(output, rendered.data)
            let what = rendered.document.map { "f:\($0.rawValue)" } ?? "\(rendered.format.rawValue) \(rendered.size)"
            logger.info("\(output): \(what), \(rendered.data.count) bytes; \(rendered.timeline.serverTimingHeader)")
            return 0
        } catch {
            let mapped = ErrorMapping.map(error)
            let text = (error as? ConfigError).map { "\($0)" } ?? mapped.logMessage
            Diagnostics.fail("\(input): \(text) (HTTP \(mapped.status))")
            return mapped.status == 500 ? 1 : 3
        }
    }

    /// Writes to a temporary file beside `path`, then renames it into place.
    static func writeFile(_ path: String, _ data: [UInt8]) throws {
        try Files.writeAtomically(data, to: path)
    }
}
