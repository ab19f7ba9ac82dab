import KilnOrigins
import KilnHTTP
import ArgumentParser
import KilnPipeline
import KilnConfigFile
import KilnModel
import KilnServer
import KilnPOSIX

/// `kiln sign /rs:300:200/cat.jpg [--expires 1h]`: the signed path, with the first key/salt pair
/// of the same settings `kiln serve` reads (file, environment, flags).
struct SignCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sign",
        abstract: "Print the signed path of a URL path: kiln sign /rs:300:200/cat.jpg --expires 1h",
        discussion: """
        The path is signed exactly as written: give it as clients will request it, percent-encoded \
        where needed, without the host and without a query string. The first pair of \
        security.keys / security.salts signs (put a new key first when rotating). With --expires, \
        exp:<unix time> is added as the first option (an expired URL gets 410).
        """)

    @Argument(help: "The path to sign, starting with / (e.g. /rs:300:200:fill/photos/cat.jpg).")
    var path: String

    @Option(help: ArgumentHelp("Expiry: a duration from now (30s, 10m, 1h, 7d) or a unix time.", valueName: "when"))
    var expires: String?

    @OptionGroup var options: SettingsOptions

    func run() throws {
        let configuration = try SignCommand.configuration(options)
        let signature = try SignCommand.signature(configuration)
        guard path.hasPrefix("/"), !path.contains("?") else {
            Diagnostics.fail("the path must start with / and have no query string: \(path)")
            throw ExitCode(2)
        }
        var signed = path
        if let expires {
            guard let t = SignCommand.expiry(expires, now: WallClock.seconds()) else {
                Diagnostics.fail("--expires: expected a duration such as 30s, 10m, 1h, 7d or a unix time, got '\(expires)'")
                throw ExitCode(2)
            }
            signed = "/exp:\(t)" + path
        }
        do {
            _ = try configuration.pipeline(processors: BuildProcessors.registry).parser.parse(signed)
        } catch {
            Diagnostics.fail("not a valid image path: \(PipelineFailure(error).message)")
            throw ExitCode(2)
        }
        guard let out = signature.sign(signed) else { throw ExitCode(2) }
        Output.line(out)
    }

    /// The settings `kiln serve` would read (file, environment, flags); exit 2 naming the problem.
    static func configuration(_ options: SettingsOptions) throws -> KilnConfiguration {
        do {
            let values = try ConfigurationLoader(catalog: KilnConfiguration.catalog).load(file: options.config, environment: ConfigurationLoader.processEnvironment(),
                                                        overrides: try options.overrides())
            return try KilnConfiguration(values)
        } catch {
            Diagnostics.fail("invalid configuration: \(error)")
            throw ExitCode(2)
        }
    }

    /// The configured signer; exit 2 when no key is configured.
    static func signature(_ configuration: KilnConfiguration) throws -> URLSignature {
        let signature = configuration.security.urlSignature
        guard !signature.keys.isEmpty else {
            Diagnostics.fail("no signing key: set security.keys and security.salts (or security.key_file and security.salt_file)")
            throw ExitCode(2)
        }
        return signature
    }

    /// `1h` → now + 3600; `1700000000` → itself (a plain number of at least 10 digits is a time,
    /// a shorter one seconds from now).
    static func expiry(_ text: String, now: Int64) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let unit = text.last, let factor = units[unit], let n = Int64(text.dropLast()), n >= 0 {
            return now + n * factor
        }
        guard let n = Int64(text), n >= 0 else { return nil }
        return text.count >= 10 ? n : now + n
    }
}
