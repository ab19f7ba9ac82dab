import KilnOrigins
import KilnHTTP
import ArgumentParser
import Glibc
import KilnPipeline
import KilnServer
import KilnModel
import Logging
import KilnPOSIX

/// `kiln warm <file>`: renders every URL path of a file into the disk cache, at low priority and
/// with a few threads, skipping what is there already (Nuke's prefetcher, destination disk).
struct WarmCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "warm",
        abstract: "Render a list of URL paths into the disk cache (cache.disk_path).",
        discussion: """
        The file has one URL path per line, as the server sees it (/rs:300:200:fill/f:webp/photos/cat.jpg; \
        nginx rewrites such as /thumb/... are not applied); blank lines and lines starting with # are skipped; \
        "-" reads standard input. Paths are rendered as requests without an Accept header, so f:auto warms \
        the variant of clients without WebP. Entries already on disk are skipped, and renders in progress in \
        running workers are waited for, not repeated. With cache.store = original only the sources are kept \
        on disk. Exit status: 0 when no path failed, 1 when some did, 2 when nothing could start.
        """)

    @Argument(help: ArgumentHelp("File of URL paths, one per line (\"-\": standard input).", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("Paths rendered at once, 1...64.", valueName: "n"))
    var jobs = 2

    @Option(help: ArgumentHelp("Scheduling niceness of the renders, 0 (normal) ... 19 (lowest).", valueName: "n"))
    var nice: Int32 = 10

    @OptionGroup var options: SettingsOptions

    func validate() throws {
        guard (1...64).contains(jobs) else { throw ValidationError("--jobs must be within 1...64") }
        guard (0...19).contains(nice) else { throw ValidationError("--nice must be within 0...19") }
    }

    func run() throws {
        let settings = try Settings.loadForTools(options)
        let caching = settings.configuration.cache
        guard caching.diskEnabled else {
            Diagnostics.fail(Settings.noDiskCache)
            throw ExitCode(2)
        }
        let text: String
        do {
            text = try WarmCommand.readAll(file)
        } catch {
            Diagnostics.fail("\(error)")
            throw ExitCode(2)
        }
        let paths = WarmCommand.parse(text)
        // The summary lists failures: the handler's per-request info lines only with --log-level.
        let logger = Diagnostics.bootstrapLogging(options.logLevel == nil ? max(settings.log.level, .warning) : settings.log.level,
                                                  role: "warm")
        // Threads inherit the niceness of the thread that creates them (Linux: per thread).
        if setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, nice) != 0 {
            logger.warning("cannot set niceness \(nice): \(Errno.text(Errno.current))")
        }
        // Results are not kept in memory: each is used once, and the disk is the destination.
        var configuration = settings.configuration
        configuration.cache.memoryCostLimit = 0
        configuration.cache.memoryCountLimit = 0

        let started = Timeline.now()
        let bar = isatty(2) == 1 ? ProgressBar(total: paths.count) : nil
        let factory = HandlerFactory(processors: BuildProcessors.registry)
        let tally = Warmer(paths: paths, logger: logger, makeHandler: { [configuration] in try factory.makeImageHandler(configuration, logger) },
                           onProgress: { bar?.update($0) }).run(jobs: jobs)
        bar?.finish()
        let seconds = Double(Timeline.now() - started) / 1e9
        Output.line("warmed \(paths.count) paths into \(caching.diskPath) in \(Output.duration(seconds: seconds)): "
            + "\(tally.rendered) rendered, \(tally.skipped) skipped (already cached), \(tally.failed) failed")
        for f in tally.failures { Output.line("  failed \(f.path): \(f.reason)") }
        if tally.failed > tally.failures.count { Output.line("  ... and \(tally.failed - tally.failures.count) more") }
        throw ExitCode(tally.failed == 0 ? 0 : 1)
    }

    /// URL paths of a list: trimmed, without blank lines and `#` comments; `http(s)://host` is
    /// dropped from full URLs and a missing leading `/` added.
    static func parse(_ text: String) -> [String] {
        var out: [String] = []
        for raw in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            var line = Substring(raw)
            while let c = line.first, c == " " || c == "\t" { line = line.dropFirst() }
            while let c = line.last, c == " " || c == "\t" { line = line.dropLast() }
            guard !line.isEmpty, !line.hasPrefix("#") else { continue }
            if line.hasPrefix("http://") || line.hasPrefix("https://") {
                let afterScheme = line[line.range(of: "://")!.upperBound...]
                line = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
            }
            out.append(line.hasPrefix("/") ? String(line) : "/" + line)
        }
        return out
    }

    /// The list file, or standard input for `-`.
    static func readAll(_ path: String) throws -> String {
        let bytes = path == "-" ? try FileDescriptorIO.readAll(0) : try Files.read(path)
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `  37/120 [########............]  31%  rendered 30  skipped 5  failed 2` on stderr, redrawn
/// in place (only used when stderr is a terminal), at most every 100 ms.
final class ProgressBar: @unchecked Sendable {
    let total: Int
    private var lastDraw: UInt64 = 0

    init(total: Int) { self.total = total }

    /// Called under the warmer's lock.
    func update(_ t: Warmer.Tally) {
        let now = Timeline.now()
        guard t.done == total || now - lastDraw >= 100_000_000 else { return }
        lastDraw = now
        let width = 24
        let filled = total == 0 ? width : t.done * width / total
        let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
        let percent = total == 0 ? 100 : t.done * 100 / total
        Output.write(fd: 2, "\r\u{1B}[K\(t.done)/\(total) [\(bar)] \(percent)%  rendered \(t.rendered)  skipped \(t.skipped)  failed \(t.failed)")
    }

    func finish() {
        Output.write(fd: 2, "\r\u{1B}[K")
    }
}
