import ArgumentParser
import FoundationEssentials
import Glibc
import KilnFastCGI
import KilnPOSIX
import KilnConfigFile
import KilnServer

/// `kiln reload`: SIGHUP to the running master, then the outcome. The master is found through
/// its status socket (`server.status_listen`, derived from the same settings as `kiln serve`'s),
/// whose `/_kiln/status?json` names its pid and counts its reloads; the command waits for the
/// count to move and exits 0 when the new settings took, 1 with the master's reason when it
/// refused them (the running workers then keep the old ones), 1 when no master answers.
struct ReloadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reload",
        abstract: "Reload the running server's settings (SIGHUP to its master) and report whether it took them.",
        discussion: """
        Finds the master through its status socket (server.status_listen, derived from server.listen as \
        kiln serve does, so give the same --config, environment and flags), sends it SIGHUP, waits for the \
        reload and prints its outcome. Exit status 0: reloaded; 1: refused (the reason is printed; the \
        running workers keep the old settings) or no server answered.
        """)

    @OptionGroup var options: SettingsOptions

    @Option(help: ArgumentHelp("Seconds to wait for the master to finish the reload.", valueName: "seconds"))
    var timeout: Double = 30

    /// The part of `/_kiln/status?json` a reload needs.
    struct Status: Decodable {
        var pid: Int32
        var reloads: Int
        var generation: Int
        var lastReloadError: String?
    }

    func run() throws {
        // Only what finds the master: the rest of the settings are the master's to judge (a
        // missing watermark is its refusal to report, not a reason not to ask).
        let server: ServerConfiguration
        do {
            let values = try ConfigurationLoader(catalog: KilnConfiguration.catalog).load(
                file: options.config, environment: ConfigurationLoader.processEnvironment(), overrides: try options.overrides())
            server = try ServerConfiguration(values)
        } catch {
            Diagnostics.fail("invalid configuration, not reloaded: \(error)")
            throw ExitCode(1)
        }
        guard let socket = StatusSocket(server) else {
            Diagnostics.fail("server.status_listen is off: kiln reload finds the master there; send SIGHUP to its pid instead (server.pid_file)")
            throw ExitCode(1)
        }
        let before = try status(socket)
        guard kill(before.pid, SIGHUP) == 0 else {
            Diagnostics.fail("cannot signal the master (pid \(before.pid)): \(Errno.text(Errno.current))")
            throw ExitCode(1)
        }
        let deadline = MonotonicClock.seconds() + timeout
        while true {
            let now = try status(socket)
            if now.reloads > before.reloads {
                if let reason = now.lastReloadError {
                    Diagnostics.fail("reload refused, the running workers keep the old settings: \(reason)")
                    throw ExitCode(1)
                }
                Output.line("reloaded: master \(now.pid), generation \(now.generation)")
                return
            }
            guard MonotonicClock.seconds() < deadline else {
                Diagnostics.fail("the master (pid \(before.pid)) did not report a reload within \(Output.duration(seconds: timeout)); see its log")
                throw ExitCode(1)
            }
            usleep(50_000)
        }
    }

    func status(_ socket: StatusSocket) throws -> Status {
        let listen = socket.address
        do {
            let r = try socket.request("GET", "/_kiln/status?json", timeout: 5)
            guard r.status == 200 else {
                Diagnostics.fail("the master's status socket \(listen) answered \(r.status): \(PurgeTiers.firstLine(r.text))")
                throw ExitCode(1)
            }
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            return try decoder.decode(Status.self, from: Data(r.body))
        } catch let failure as FastCGIClient.Failure {
            Diagnostics.fail("no kiln server answers on \(listen) (server.status_listen): \(failure.description)")
            throw ExitCode(1)
        } catch let exit as ExitCode {
            throw exit
        } catch {
            Diagnostics.fail("the master's status page did not parse: \(error)")
            throw ExitCode(1)
        }
    }
}
