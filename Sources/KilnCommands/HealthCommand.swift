import KilnOrigins
import KilnHTTP
import ArgumentParser
import KilnServer

/// `kiln health`: 0 when the running kiln answers `/_kiln/health` with 200, 1 otherwise (Docker's
/// `HEALTHCHECK CMD kiln health`).
struct HealthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "health",
        abstract: "Exit 0 when the running kiln is healthy (its master answers /_kiln/health with 200), else 1.",
        discussion: """
        By default asks the master's status socket (server.status_listen, derived from server.listen \
        as the server does: the same settings file, environment and flags give the same address) over \
        FastCGI: no nginx or HTTP port needed. --url asks over HTTP instead, e.g. through nginx: \
        kiln health --url http://127.0.0.1:8080/_kiln/health
        """)

    @OptionGroup var options: SettingsOptions

    @Option(help: ArgumentHelp("Ask this http:// URL instead of the status socket.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("Seconds to wait for the answer.", valueName: "seconds"))
    var timeout: Double = 3

    func run() throws {
        do {
            let answer: HealthProbe.Answer
            if let url {
                answer = try HealthProbe.http(url: url, timeout: timeout)
            } else {
                let settings = try Settings.loadOrExit(options)
                guard let address = settings.server.statusAddress else {
                    Diagnostics.fail("server.status_listen is off: give --url")
                    throw ExitCode(1)
                }
                // The status socket asks for the peer secret as the main one does.
                let secret = try settings.server.resolvedPeerSecret()
                answer = try HealthProbe.fastCGI(address, peerSecret: secret, timeout: timeout)
            }
            Output.write(fd: 1, "\(answer.status) \(answer.body.hasSuffix("\n") ? answer.body : answer.body + "\n")")
            if answer.status != 200 { throw ExitCode(1) }
        } catch let e as HealthProbe.Failure {
            Diagnostics.fail("unhealthy: \(e.description)")
            throw ExitCode(1)
        }
    }
}
