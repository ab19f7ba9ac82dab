import Glibc
import KilnModel
import KilnServer
import KilnPOSIX

// `kiln-worker`: one worker process, started by `kiln serve` (posix_spawn of the `kiln-worker`
// next to `kiln`) with the listening socket on fd 0, the master's validated settings on fd 3
// (`SettingsSnapshot`) and the scoreboard on fd 4. It parses no TOML and no command line beyond
// the master's three options, so it links neither TOMLKit, Foundation, ICU nor ArgumentParser:
// each worker touches a third of the pages the former `kiln worker` did at start (docs/benchmarks.md, "Memory").
//
//     kiln-worker --settings-fd 3 [--master-pid PID] [--scoreboard-slot N] [--lookup 1]

func fail(_ message: String) -> Never {
    try? FileDescriptorIO.writeAll(2, Array("kiln-worker: \(message)\n".utf8))
    exit(2)
}

var masterPID: Int32?
var settingsFD: Int32?
var scoreboardSlot: Int?
var lookup = false
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(name) needs a value") }
    guard let number = Int32(value), number >= 0 else { fail("\(name): not a number: \(value)") }
    switch name {
    case "--master-pid": masterPID = number
    case "--settings-fd": settingsFD = number
    case "--scoreboard-slot": scoreboardSlot = Int(number)
    case "--lookup": lookup = number != 0
    default: fail("unknown option \(name) (kiln-worker is started by `kiln serve`)")
    }
}
guard let settingsFD else { fail("started without --settings-fd (kiln-worker is started by `kiln serve`)") }

_ = Worker.installStopHandler()
let settings: KilnConfiguration
let values: ConfigValues
do {
    values = try SettingsSnapshot.read(fd: settingsFD)
    settings = try KilnConfiguration(values)
} catch {
    fail("invalid configuration: \(error)")
}
let logger = LogLineHandler.bootstrap(settings.log, role: "worker")
let worker = Worker(settings: settings, masterPID: masterPID,
                    scoreboardSlot: scoreboardSlot, logger: logger)
exit(worker.run(makeHandler: HandlerFactory(processors: CustomProcessors.registry, lookupOnly: lookup).makeHandler))
