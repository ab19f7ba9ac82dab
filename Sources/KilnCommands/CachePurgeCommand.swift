import ArgumentParser
import KilnFastCGI
import KilnModel
import KilnOrigins
import KilnPipeline
import KilnServer
import Logging

extension CacheCommand {
    /// `kiln cache purge [--source <path>]`. Without `--source`: every entry of the local disk
    /// cache (and, through the purge journal, every local worker's memory). With it: the source
    /// everywhere it can be, in an order where no tier refills another with an old variant:
    /// the shared store, the local disk cache, every host of `purge.hosts`, the edges of
    /// `purge.varnish`, the hooks of `purge.hooks` (`PurgeTiers`). One line per tier and target;
    /// exit status 0 when every one succeeded, else 1 with the reasons on stderr.
    struct Purge: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Remove every entry, or with --source every variant of one source from every tier (disk, memory, shared store, fleet, edges, CDN).",
            discussion: """
                Without --source, the local disk cache is emptied and the local workers empty their memory caches at their next request. \
                With --source, in this order: the shared store (cache.shared), the local disk cache and its workers' memory, every host of \
                purge.hosts (POST /_kiln/purge on its status socket, with server.peer_secret), every edge of purge.varnish (PURGE / with \
                xkey: kiln-src-<tag>), every hook of purge.hooks (POST). Prints one line per tier; exit status 1 when any failed.
                """)

        @Option(help: ArgumentHelp("Source path relative to the root, as in URLs (photos/cat.jpg).", valueName: "path"))
        var source: String?
        @OptionGroup var options: SettingsOptions

        func run() throws {
            guard let source else {
                let (disk, logger, settings) = try CacheCommand.openDisk(options, role: "cache")
                // Through the running server of this folder when there is one (it logs the purge).
                let tiers = PurgeTiers(configuration: settings.configuration, logger: logger)
                if let server = tiers.purgeAllThroughLocalServer(diskPath: disk.path) {
                    Output.line("purged \(server.entries) entries (\(Output.bytes(server.bytes))) from \(disk.path)\(server.front)")
                    return
                }
                let removed = disk.purgeAll()
                Output.line("purged \(removed.entries) entries (\(Output.bytes(removed.bytes))) from \(disk.path)")
                if let front = tiers.purgeFront(nil) {
                    Output.line(front.line)
                    if !front.ok { throw ExitCode(1) }
                }
                return
            }
            let relative = source.split(separator: "/").joined(separator: "/")
            guard !relative.isEmpty, !relative.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }),
                  !relative.utf8.contains(0) else {
                Diagnostics.fail("--source needs a path relative to the root, such as photos/cat.jpg")
                throw ExitCode(1)
            }
            let settings = try Settings.loadForTools(options)
            let logger = Diagnostics.bootstrapLogging(settings.log.level, role: "cache")
            let tiers = PurgeTiers(configuration: settings.configuration, logger: logger)
            guard settings.configuration.cache.diskEnabled || tiers.hasRemoteTiers else {
                Diagnostics.fail("nothing to purge: no disk cache (cache.disk_path), shared store (cache.shared) or [purge] targets configured")
                throw ExitCode(1)
            }
            var failed = false
            let outcomes = tiers.purge(sourcePath: relative)
            for outcome in outcomes {
                Output.line(outcome.line)
                if !outcome.ok {
                    failed = true
                    Diagnostics.fail("purge of \(relative) failed at \(outcome.target): \(outcome.answer)")
                }
            }
            // A mistyped path purges nothing anywhere and would pass unnoticed: say so. A deleted
            // source's variants are still purged (its file is gone but a tier held them); where
            // no tier counts what it removed, nothing is said.
            if tiers.namesNoSource(relative), outcomes.allSatisfy({ ($0.removed ?? 0) == 0 }),
               outcomes.contains(where: { $0.removed != nil }) {
                Diagnostics.fail("no source at \(relative) under \(settings.configuration.source.root), and no cache held anything of it: check the path (relative to source.root, as in URLs)")
                failed = true
            }
            if failed { throw ExitCode(1) }
        }
    }
}
