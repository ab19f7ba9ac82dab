import Glibc
import Testing
@testable import KilnServer

/// SIGHUP: a good configuration starts a new generation and hands the old one over; a bad one
/// changes nothing.
@Suite struct SupervisorReloadTests {
    static func reloaded(_ h: SupervisorHarness, _ change: (inout ServerConfiguration) -> Void = { _ in },
                         limits: (inout WorkerLimitsConfiguration) -> Void = { _ in }) -> SupervisorEvent {
        var server = h.supervisor.configuration
        change(&server)
        var l = h.supervisor.limits
        limits(&l)
        return .reloaded(.loaded(server, l))
    }

    @Test func aGoodConfigurationStartsANewGenerationAndHandsTheOldOneOver() {
        var h = SupervisorHarness(workers: 2, shutdownTimeout: 10)
        h.send(.start(boards: 8), at: 100)
        #expect(h.send(.hangUp, at: 300) == [.log(.notice, "received SIGHUP: reloading the configuration", [:]), .reload])
        let reload = h.send(Self.reloaded(h, { $0.workers = 3 }, limits: { $0.renderTimeout = 3 }), at: 300)
        #expect(reload == [
            .countRestarts(.reload, 2),
            .spawn(SpawnRequest(slot: 0, generation: 2, board: 2)), .log(.info, "started worker 102 (slot 0, generation 2)", [:]),
            .spawn(SpawnRequest(slot: 1, generation: 2, board: 3)), .log(.info, "started worker 103 (slot 1, generation 2)", [:]),
            .spawn(SpawnRequest(slot: 2, generation: 2, board: 4)), .log(.info, "started worker 104 (slot 2, generation 2)", [:]),
            .handOver(100), .handOver(101),
            .log(.notice, "generation 2 started; 2 workers of the previous generation finish their requests and exit", [:]),
            .log(.info, "workers of generation 2: 102 103 104", [:]),
        ])
        #expect(h.supervisor.generation == 2 && h.current == [102, 103, 104])
        #expect(h.supervisor.limits.renderTimeout == 3 && h.supervisor.configuration.workers == 3)
        // The old generation finishes and is not replaced, nor counted again.
        #expect(h.send(.exited(pid: 100, status: exitStatus(0)), at: 301) == [
            .collectMetrics(board: 0), .log(.info, "worker 100 (generation 1) exited with status 0", [:]),
        ])
        #expect(h.send(.tick, at: 301).isEmpty)
        // One still running at shutdown_timeout: SIGKILL, once.
        #expect(h.send(.tick, at: 309.9).isEmpty)
        #expect(h.send(.tick, at: 310) == [
            .log(.warning, "worker 101 (generation 1) still running shutdown_timeout after SIGTERM; sending SIGKILL", [:]),
            .kill(101, SIGKILL),
        ])
        #expect(h.send(.tick, at: 311).isEmpty)
        #expect(h.send(.exited(pid: 101, status: SIGKILL), at: 311).messages == ["worker 101 (generation 1) was killed by SIGKILL"])
    }

    @Test func aBadConfigurationIsLoggedAndEverythingKept() {
        var h = SupervisorHarness(workers: 2)
        h.send(.start(boards: 8), at: 100)
        let before = h.supervisor.workers
        let actions = h.send(.reloaded(.failed("limits.render_timeout: not a duration: \"soon\"")), at: 300)
        #expect(actions == [.log(.error, "reload failed, keeping the running workers: limits.render_timeout: not a duration: \"soon\"", [:])])
        #expect(h.supervisor.generation == 1 && h.supervisor.workers == before)
        #expect(h.send(.tick, at: 400).isEmpty)
    }

    @Test func whatNeedsARestartIsKeptAndSaid() {
        var h = SupervisorHarness(workers: 1)
        h.send(.start(boards: 8), at: 100)
        let old = h.supervisor.configuration
        let actions = h.send(Self.reloaded(h) {
            $0.backlog = old.backlog + 1
            $0.statusListen = "127.0.0.1:9999"
            $0.pidFile = "/run/kiln-new.pid"
        }, at: 300)
        #expect(Array(actions.prefix(3)) == [
            .log(.warning, "status_listen changes only on restart", [:]),
            .log(.warning, "server.backlog = \(old.backlog + 1): listen, backlog, socket_mode, socket_owner and socket_group change only on restart; still listening on \(old.listen), backlog \(old.backlog)", [:]),
            .replacePidFile("/run/kiln-new.pid"),
        ])
        #expect(h.supervisor.configuration.backlog == old.backlog && h.supervisor.configuration.statusListen == old.statusListen)
        #expect(h.supervisor.configuration.pidFile == "/run/kiln-new.pid")
    }

    /// Issue 25: the line names what changed (a new `listen` said only where it still listens).
    @Test func aNewListenAddressIsNamed() {
        var h = SupervisorHarness(workers: 1)
        h.send(.start(boards: 8), at: 100)
        let old = h.supervisor.configuration
        let actions = h.send(Self.reloaded(h) {
            $0.listen = .unix(path: "/run/kiln/other.sock")
            $0.socketMode = 0o600
        }, at: 300)
        #expect(actions.first == .log(.warning, "server.listen = unix:/run/kiln/other.sock, server.socket_mode = 0600: listen, backlog, socket_mode, socket_owner and socket_group change only on restart; still listening on \(old.listen), backlog \(old.backlog)", [:]))
        #expect(h.supervisor.configuration.listen == old.listen && h.supervisor.configuration.socketMode == old.socketMode)
    }

    @Test func aReloadEndsACrashLoop() {
        var h = SupervisorHarness(workers: 1)
        h.send(.start(boards: 8), at: 100)
        for i in 1...11 {
            h.send(.exited(pid: h.current[0], status: exitStatus(1)), at: 100 + Double(i) / 10)
            h.send(.tick, at: 100 + Double(i) / 10)
        }
        #expect(h.supervisor.inCrashLoop)
        h.send(Self.reloaded(h), at: 102)
        #expect(!h.supervisor.inCrashLoop && h.supervisor.crashTimes.isEmpty)
    }
}
