import KilnOrigins
import KilnHTTP
import ArgumentParser
import Glibc
import KilnPipeline
import KilnModel
import Logging
import KilnPOSIX

/// `kiln cache stats | sweep | purge`: the disk cache of `cache.disk_path`, with the same settings
/// as `kiln serve` (`--config`, environment, `--set`). Safe while servers run: entries appear and
/// disappear by `rename`/`unlink`, and one process sweeps at a time.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Inspect, sweep or purge the disk cache (cache.disk_path); purge a source from every tier.",
        subcommands: [Stats.self, Sweep.self, Purge.self, Fill.self])

    /// The disk cache the settings name (with its logger and the settings, loaded once), or a
    /// one-line error and exit status 1 when none is set.
    static func openDisk(_ options: SettingsOptions, role: String) throws -> (DiskCache, Logger, Settings) {
        let settings = try Settings.loadForTools(options)
        let caching = settings.configuration.cache
        guard caching.diskEnabled else {
            Diagnostics.fail(Settings.noDiskCache)
            throw ExitCode(1)
        }
        let logger = Diagnostics.bootstrapLogging(settings.log.level, role: role)
        guard let disk = DiskCache(caching, logger: logger) else { throw ExitCode(1) }
        return (disk, logger, settings)
    }

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Entries, bytes, limit, leftover temporary and lock files, free space; the shared store's reads and writes (from the local master's /_kiln/metrics).")

        @Flag(help: "One JSON object instead of text.") var json = false
        @OptionGroup var options: SettingsOptions

        func run() throws {
            let (disk, _, settings) = try CacheCommand.openDisk(options, role: "cache")
            let s = disk.stats()
            // The shared tier's counters, from the local master's metrics (`server.status_listen`).
            let shared = SharedTierMetrics.read(settings.server)
            if json {
                let free = s.filesystemFreeBytes.map(String.init) ?? "null"
                Output.line("{\"path\":\(Output.jsonString(disk.path)),\"entries\":\(s.entries),\"bytes\":\(s.bytes),"
                    + "\"size_limit\":\(s.sizeLimit),\"temp_files\":\(s.tempFiles),\"lock_files\":\(s.lockFiles),\"free_bytes\":\(free),"
                    + "\"shared\":\(shared?.json ?? "null")}")
                return
            }
            let percent = s.sizeLimit > 0 ? Double(s.bytes) * 100 / Double(s.sizeLimit) : 0
            Output.line("disk cache \(disk.path)")
            Output.line("  entries:    \(s.entries), \(Output.bytes(s.bytes)) of \(Output.bytes(s.sizeLimit)) (\(Output.fixed(percent, 1))%)")
            Output.line("  leftovers:  \(s.tempFiles) temporary files, \(s.lockFiles) lock files")
            Output.line("  free space: \(s.filesystemFreeBytes.map(Output.bytes) ?? "unknown")")
            if let shared { shared.lines.forEach(Output.line) }
        }
    }

    struct Sweep: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Evict least recently used entries down to the low-water mark when over the limit; remove expired failures and stale lock and temporary files.")

        @OptionGroup var options: SettingsOptions

        func run() throws {
            let (disk, _, _) = try CacheCommand.openDisk(options, role: "cache")
            let started = Timeline.now()
            var removed = (entries: 0, bytes: 0, locks: 0, temps: 0)
            var last: SweepStats?
            var sweeps = 0
            // Another process may hold the sweep lock for a moment: retry for up to 10 s. Bounded
            // batches (100 000 evictions hold 4.8 MB; each batch scans every entry once): sweep
            // again while the last one stopped over the limit.
            while true {
                guard let s = disk.sweep(maxBatch: 100_000) else {
                    if Timeline.now() - started > 10_000_000_000 {
                        Diagnostics.fail("cannot take \(disk.path)/sweep.lock (another process kept sweeping for 10 s, or the folder is not writable)")
                        throw ExitCode(1)
                    }
                    Sleep.milliseconds(50)
                    continue
                }
                sweeps += 1
                removed.entries += s.removedEntries
                removed.bytes += s.removedBytes
                removed.locks += s.removedLocks
                removed.temps += s.removedTemps
                last = s
                if !s.overLimit || s.removedEntries == 0 || sweeps >= 1000 { break }
            }
            let left = last.map { ($0.entries, $0.bytes) } ?? (0, 0)
            let ms = Double(Timeline.now() - started) / 1e6
            Output.line("swept \(disk.path) in \(Output.fixed(ms, 1)) ms: removed \(removed.entries) entries (\(Output.bytes(removed.bytes))), "
                + "\(removed.locks) stale lock files, \(removed.temps) stale temporary files; "
                + "left \(left.0) entries, \(Output.bytes(left.1)) of \(Output.bytes(disk.sizeLimit))")
        }
    }
}
