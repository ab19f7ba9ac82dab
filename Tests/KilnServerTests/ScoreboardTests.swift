import Glibc
import KilnPipeline
import KilnModel
import Logging
import Testing
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// The scoreboard as master and worker see it (both in this process: the worker's view maps the
/// master's memfd again, as a spawned worker does from fd 4), and the request monitor that writes
/// a worker's slot and notices a web server that hung up.
@Suite struct ScoreboardTests {
    @Test func aWorkersSlotIsWhatTheMasterReads() throws {
        let master = try Scoreboard.create(slots: 8)
        defer { close(master.fd) }
        let worker = try #require(Scoreboard.attach(fd: master.fd))
        #expect(worker.slots == 8)
        master.reset(3, pid: 0)
        var slot = try #require(master.read(3))
        #expect(!slot.isBusy && slot.stage == .idle && slot.requestID == 0)

        let t0 = Scoreboard.now()
        worker.begin(3, pid: 4242, uri: "/rs:300:200/cat.jpg", requestID: "0123456789abcdef0123456789abcdef", stage: .accept)
        worker.enter(3, stage: .process, detail: "bl:12")
        slot = try #require(master.read(3))
        #expect(slot.pid == 4242 && slot.isBusy && slot.requestID == 1)
        #expect(slot.uri == "/rs:300:200/cat.jpg" && slot.traceID == "0123456789abcdef0123456789abcdef")
        #expect(slot.stage == .process && slot.stageDescription == "process (bl:12)")
        #expect(try #require(slot.requestStart) >= t0)
        #expect(slot.stageStart >= slot.requestStart!)

        worker.end(3)
        slot = try #require(master.read(3))
        #expect(!slot.isBusy && slot.stage == .idle && slot.detail.isEmpty && slot.requestsDone == 1)
        // Other slots are untouched; out of range is nil.
        #expect(master.read(2)?.requestID == 0)
        #expect(master.read(8) == nil && master.read(-1) == nil)
    }

    @Test func longURIsAreCutNotOverflowed() throws {
        let board = try Scoreboard.create(slots: 2)
        defer { close(board.fd) }
        let long = "/" + String(repeating: "a", count: 5000)
        board.begin(1, pid: 1, uri: long, requestID: String(repeating: "f", count: 128), stage: .accept)
        let slot = try #require(board.read(1))
        #expect(slot.uri.utf8.count == 319 && long.hasPrefix(slot.uri))
        #expect(slot.traceID == String(repeating: "f", count: 63))
        #expect(board.read(0)?.uri == "")
    }

    @Test func anotherFileIsNotAScoreboard() throws {
        let fd = open("/dev/null", O_RDONLY)
        defer { close(fd) }
        #expect(Scoreboard.attach(fd: fd) == nil)
        #expect(Scoreboard.attach(fd: 987) == nil)
    }

    @Test func theMonitorPublishesStagesAndStopsWhenThePeerHangsUp() throws {
        let board = try Scoreboard.create(slots: 4)
        defer { close(board.fd) }
        var fds: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        defer { close(fds[0]) }
        let monitor = RequestMonitor(scoreboard: board, slot: 2)
        monitor.begin(uri: "/w:10/a.jpg", connectionFD: fds[0])
        try monitor.enter(.decode)
        #expect(board.read(2)?.stage == .decode)
        #expect(board.read(2)?.pid == getpid())
        // Unread request bytes are not a hang-up.
        _ = write(fds[1], "x", 1)
        try monitor.enter(.process, detail: "rs:10:0")
        close(fds[1])
        #expect(throws: PipelineFailure.self) { try monitor.enter(.encode) }
        do {
            try monitor.enter(.encode)
        } catch {
            #expect(error.kind == .cancelled && error.message.contains("before encode"))
        }
        #expect(monitor.abandonedCount == 2)
        monitor.end(status: 499, bodyBytes: 0, cache: nil)
        #expect(board.read(2)?.isBusy == false)
        // Between requests there is no connection to check.
        try monitor.enter(.cache)
    }

    @Test func abandonedIsNeverRememberedAndMapsTo499() {
        #expect(!PipelineFailure.Kind.cancelled.isRememberable)
        #expect(ErrorMapping.status(of: .cancelled) == 499)
    }

    @Test func theStatusSocketSitsBesideTheListenSocket() throws {
        var c = ServerConfiguration()
        c.listen = .unix(path: "/run/kiln/kiln.sock")
        #expect(c.statusAddress == .unix(path: "/run/kiln/kiln-status.sock"))
        c.listen = .unix(path: "/run/kiln/socket")
        #expect(c.statusAddress == .unix(path: "/run/kiln/socket-status.sock"))
        c.listen = .tcp(host: "127.0.0.1", port: 9000)
        #expect(c.statusAddress == .tcp(host: "127.0.0.1", port: 9001))
        c.statusListen = "off"
        #expect(c.statusAddress == nil)
        c.statusListen = "unix:/tmp/s.sock"
        #expect(c.statusAddress == .unix(path: "/tmp/s.sock"))
        #expect(throws: ConfigError.self) { try ServerConfiguration(ConfigValues(["server.status_listen": "nowhere"])) }
    }

    @Test func theOverloadAnswerSaysWhenToRetry() {
        let r = Master.overloadResponse(queueTimeout: 1.5)
        #expect(r.status == 503)
        #expect(r.header("Retry-After") == "2")
        #expect(r.header("Cache-Control") == "no-store")
        #expect(String(decoding: r.body, as: UTF8.self).contains("busy for more than 1.5 s"))
    }
}
