import Glibc
import Kiln
import KilnCore
import KilnServer
import Logging

/// `kiln process input spec output`: `HandlerFactory.render(file:…)`, then the file written.
enum ProcessFile {
    static func process(input: String, spec: String, output: String, configuration settings: KilnConfiguration, logger: Logger) -> Int32 {
        do {
            let factory = HandlerFactory(processors: CustomProcessors.registry)
            let configuration = try settings.pipeline(processors: factory.processors)
            let rendered = try factory.render(file: input, spec: spec, outputPath: output, configuration: configuration)
            try writeFile(output, rendered.data)
            logger.info("\(output): \(rendered.format.rawValue) \(rendered.size), \(rendered.data.count) bytes; \(rendered.timeline.serverTimingHeader)")
            return 0
        } catch {
            let mapped = ErrorMapping.map(error)
            let text = (error as? ConfigError).map { "\($0)" } ?? mapped.logMessage
            Diagnostics.fail("\(input): \(text) (HTTP \(mapped.status))")
            return mapped.status == 500 ? 1 : 3
        }
    }

    struct WriteError: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes to a temporary file beside `path`, then renames it into place.
    static func writeFile(_ path: String, _ data: [UInt8]) throws {
        let temp = path + ".tmp-\(getpid())"
        let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw WriteError(description: "cannot create \(temp): \(String(cString: strerror(errno)))") }
        var off = 0
        while off < data.count {
            let n = data.withUnsafeBytes { write(fd, $0.baseAddress! + off, $0.count - off) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { close(fd); unlink(temp); throw WriteError(description: "cannot write \(temp)") }
            off += n
        }
        close(fd)
        guard rename(temp, path) == 0 else { unlink(temp); throw WriteError(description: "cannot rename to \(path)") }
    }
}
