import Glibc
import KilnOrigins
import KilnHTTP
import ArgumentParser
import KilnPipeline
import KilnConfigFile
import KilnModel
import KilnServer

/// `kiln config check | dump | table | example | vcl`: the configuration as Kiln reads it. Every list of
/// keys here comes from the declarations (`KilnConfiguration.catalog`).
struct ConfigCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Check a configuration file, show the effective settings, or print the key table and an example file.",
        subcommands: [Check.self, Dump.self, Table.self, Example.self, VCL.self])

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a TOML configuration file as start and reload do: \"ok\" and exit status 0, or one line naming the key and exit status 2.",
            discussion: """
                Only the file is checked (with the defaults), not the environment or flags. Every check of start and reload runs: \
                the keys, presets, watermark and fallback files (read and decoded), origins and the shared store's settings. \
                Relative paths resolve against the working directory, as kiln serve resolves them. A source.root that is not a \
                folder here is reported on a note line and the rest is checked against an empty one.
                """)

        @Argument(help: ArgumentHelp("The TOML file.", valueName: "file")) var file: String

        func run() throws {
            do {
                let values = try ConfigurationLoader(catalog: KilnConfiguration.catalog).loadFile(file)
                var configuration = try KilnConfiguration(values)
                var st = stat()
                var empty: String?
                if stat(configuration.source.root, &st) != 0 || st.st_mode & S_IFMT != S_IFDIR {
                    Output.line("note: source.root \(configuration.source.root) is not a folder here; the rest is checked without it")
                    var template = Array("/tmp/kiln-check-XXXXXX".utf8CString)
                    empty = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }.map { String(cString: $0) }
                    configuration.source.root = empty ?? "/"
                }
                defer { if let empty { rmdir(empty) } }
                try HandlerFactory(processors: BuildProcessors.registry).validate(configuration)
            } catch {
                Diagnostics.fail("\(error)")
                throw ExitCode(2)
            }
            Output.line("ok")
        }
    }

    struct Dump: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Every setting's effective value and where it came from (default, file:line, environment VAR, flag).",
            discussion: "Takes the same --config, KILN_* variables and flags as kiln serve.")

        @OptionGroup var options: SettingsOptions

        func run() throws {
            let settings = try Settings.loadOrExit(options)
            let catalog = KilnConfiguration.catalog
            var rows: [(String, String, String)] = []
            for s in catalog.settings {
                var raw = settings.values.string(s.key) ?? s.defaultRaw
                // signing keys and salts, the peer secret, thumbor's key
                let secrets = SecurityConfiguration.secretKeys.union(ServerConfiguration.secretKeys).union(AdapterConfiguration.secretKeys)
                if secrets.contains(s.key), !raw.isEmpty { raw = "(hidden)" }
                rows.append((s.key, catalog.tomlLiteral(s, raw), settings.values.origin(s.key)))
            }
            for key in settings.values.values.keys.sorted() where catalog.info(key) == nil {
                rows.append((key, catalog.quoted(settings.values.string(key) ?? ""), settings.values.origin(key)))
            }
            let keyWidth = rows.map(\.0.count).max() ?? 0
            let valueWidth = min(rows.map(\.1.count).max() ?? 0, 40)
            for (key, value, origin) in rows {
                Output.line(pad(key, keyWidth) + " = " + pad(value, valueWidth) + "  # " + origin)
            }
        }

        func pad(_ s: String, _ width: Int) -> String {
            s + String(repeating: " ", count: max(0, width - s.count))
        }
    }

    struct Table: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The key table of the README (markdown), generated from the declarations.")

        @Option(help: ArgumentHelp("Replace the table between <!-- config-table:begin --> and <!-- config-table:end --> in this file instead of printing it.",
                                   valueName: "file"))
        var update: String?

        func run() throws {
            let table = KilnConfiguration.catalog.markdownTable()
            guard let update else { return Output.write(fd: 1, table) }
            let begin = "<!-- config-table:begin -->\n", end = "<!-- config-table:end -->"
            do {
                let text = try WarmCommand.readAll(update)
                guard let b = text.firstRange(of: begin), let e = text[b.upperBound...].firstRange(of: end) else {
                    Diagnostics.fail("\(update): no \(begin.dropLast()) ... \(end) markers")
                    throw ExitCode(2)
                }
                try ProcessFile.writeFile(update, Array((String(text[..<b.upperBound]) + table + String(text[e.lowerBound...])).utf8))
            } catch let error as ExitCode {
                throw error
            } catch {
                Diagnostics.fail("\(error)")
                throw ExitCode(2)
            }
        }
    }

    struct Example: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "kiln.example.toml: every key with its default and documentation, generated from the declarations.")

        func run() {
            Output.write(fd: 1, KilnConfiguration.catalog.exampleTOML())
        }
    }
}
