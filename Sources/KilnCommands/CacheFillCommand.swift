import KilnOrigins
import KilnHTTP
import ArgumentParser
import Glibc
import KilnPipeline
import KilnModel
import KilnPOSIX

extension CacheCommand {
    /// `kiln cache fill`: synthetic entries for measuring the disk cache at scale (a million
    /// entries without a million renders). Each is a whole entry, as a render would store it, for
    /// a source path `synthetic/<n>.jpg` no request names; access times are spread over `--spread`
    /// so that the sweep has an order to follow. `kiln cache purge --source synthetic/<n>.jpg` or
    /// a sweep removes them like any other entry.
    struct Fill: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write synthetic entries (for benchmarks of a large cache): --entries of --size bytes, accessed over --spread.")

        @Option(help: ArgumentHelp("Entries to write (1_000_000 is fine).", valueName: "count"))
        var entries: String = "1000"
        @Option(help: ArgumentHelp("Body bytes of each entry (B, KiB, MiB).", valueName: "size"))
        var size: String = "16KiB"
        @Option(help: ArgumentHelp("Last accesses spread evenly over this long before now (e.g. 30d, 12h).", valueName: "duration"))
        var spread: String = "30d"
        @Option(help: ArgumentHelp("First synthetic number (to add to an earlier fill).", valueName: "n"))
        var first: Int = 0
        @OptionGroup var options: SettingsOptions

        func run() throws {
            guard let count = ConfigUnits.count(entries), count >= 0 else {
                Diagnostics.fail("--entries needs a count such as 1000000, not \(entries)")
                throw ExitCode(1)
            }
            guard let bytes = ConfigUnits.size(size), bytes >= 0, bytes <= 64 << 20 else {
                Diagnostics.fail("--size needs a size up to 64MiB such as 16KiB, not \(size)")
                throw ExitCode(1)
            }
            guard let seconds = spreadSeconds(spread) else {
                Diagnostics.fail("--spread needs a duration such as 30d, 12h or 90s, not \(spread)")
                throw ExitCode(1)
            }
            let (disk, _, _) = try CacheCommand.openDisk(options, role: "cache")
            let started = Timeline.now()
            let nowNs = Int64(DiskCache.wallClockMilliseconds()) * 1_000_000
            var body = [UInt8](repeating: 0, count: bytes)
            for i in body.indices { body[i] = UInt8(truncatingIfNeeded: i &* 2_654_435_761 >> 13) }
            var written = 0
            for n in first..<(first + count) {
                let path = "synthetic/\(n).jpg"
                let key = CacheKey(canonicalRequest: "fill/" + path, outputFormat: "jpeg",
                                   source: SourceIdentity(size: bytes, mtimeNanoseconds: 0, inode: UInt64(n)), sourcePath: path)
                let image = CachedImage(data: body, format: .jpeg, digest: "fill-\(n)", sourceModified: 0, sourcePath: path)
                guard disk.store(.image(image), for: key) else {
                    Diagnostics.fail("stopped after \(written) entries: cannot write to \(disk.path) (see the log)")
                    throw ExitCode(1)
                }
                // Oldest first by number, evenly over the spread.
                let age = count > 1 ? Int64(seconds * 1e9 * Double(count - 1 - (n - first)) / Double(count - 1)) : 0
                let at = nowNs - age
                var times = [timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000)),
                             timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))]
                _ = utimensat(AT_FDCWD, disk.entryFilePath(key), &times, 0)
                written += 1
            }
            let ms = Double(Timeline.now() - started) / 1e6
            Output.line("wrote \(written) synthetic entries of \(Output.bytes(bytes)) to \(disk.path) in \(Output.fixed(ms / 1000, 1)) s")
        }

        /// Durations as the settings spell them, plus days (`30d`).
        private func spreadSeconds(_ raw: String) -> Double? {
            if raw.hasSuffix("d"), let days = Double(raw.dropLast()), days >= 0 { return days * 86_400 }
            return ConfigUnits.duration(raw)
        }
    }
}
