import Dispatch
import Foundation
import Glibc
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI

/// Black-box tests of `kiln serve`: the real binary, a unix socket in a temporary folder, and a
/// FastCGI client speaking to it as nginx would. Each test takes one to three seconds.
@Suite(.serialized, .enabled(if: ServerProcess.binary != nil, "needs the kiln binary (swift build)"))
struct ProcessTests {
    final class ReplyBox: @unchecked Sendable {
        var reply: FastCGITestClient.Reply?
        var error: Error?
    }

    /// Starts `kiln serve` on `<folder>/k.sock` and waits until the workers accept.
    /// `workers`: passed as `--workers` unless nil (then it comes from `extra`, e.g. a file).
    func start(_ extra: [String], workers: Int? = 2, expectWorkers: Int = 2, environment: [String: String] = [:]) throws -> (ServerProcess, FastCGITestClient) {
        let folder = try TemporaryFile.folder()
        let socket = folder + "/k.sock"
        let workerFlag = workers.map { ["--workers", String($0)] } ?? []
        let server = try ServerProcess(["serve", "--listen", "unix:" + socket] + workerFlag + extra,
                                       folder: folder, environment: environment)
        let client = FastCGITestClient(target: .unix(socket), timeout: 10)
        let up = ServerProcess.wait(timeout: 10) { (try? client.get("/ping")) != nil }
        if !up {
            server.cleanUp()
            throw FastCGITestClient.Failure(description: "server did not answer: \(server.log)")
        }
        _ = ServerProcess.wait(timeout: 5) { server.children().count == (workers ?? expectWorkers) }
        return (server, client)
    }

    /// A client of the master's status socket (`server.status_listen = auto`: `k-status.sock` beside
    /// `k.sock`, or the port after a TCP port).
    func statusClient(_ server: ServerProcess, tcpPort: UInt16? = nil) -> FastCGITestClient {
        FastCGITestClient(target: tcpPort.map { .tcp("127.0.0.1", $0 + 1) } ?? .unix(server.folder + "/k-status.sock"), timeout: 5)
    }

    /// Polls the master's status page (`/_kiln/status?json`) until `condition` holds for it; false
    /// after `timeout` seconds. What the test waits for instead of sleeping and assuming.
    func waitForStatus(_ status: FastCGITestClient, timeout: Double = 5, _ condition: ([String: Any]) -> Bool) -> Bool {
        ServerProcess.wait(timeout: timeout) {
            guard let reply = try? status.get("/_kiln/status?json"), reply.status == 200,
                  let page = (try? JSONSerialization.jsonObject(with: Data(reply.body))) as? [String: Any] else { return false }
            return condition(page)
        }
    }

    /// A worker is busy with a request whose URI starts with `prefix`.
    func busy(with prefix: String) -> ([String: Any]) -> Bool {
        { page in
            ((page["workers"] as? [[String: Any]]) ?? []).contains {
                $0["state"] as? String == "busy" && ($0["uri"] as? String)?.hasPrefix(prefix) == true
            }
        }
    }

    /// `count` connections wait in the listen queue.
    func queued(_ count: Int) -> ([String: Any]) -> Bool {
        { page in (page["listen_queue"] as? Int) == count }
    }

    /// One request on a background thread (a slow request in flight while the test sends signals).
    func inBackground(_ client: FastCGITestClient, _ uri: String) -> (DispatchSemaphore, ReplyBox) {
        let done = DispatchSemaphore(value: 0)
        let box = ReplyBox()
        Thread {
            do { box.reply = try client.get(uri) } catch { box.error = error }
            done.signal()
        }.start()
        return (done, box)
    }

    @Test func answersReplacesWorkersAndStopsCleanly() throws {
        let pidFile = "/tmp/kiln-test-\(getpid()).pid"
        let (server, client) = try start(["--set", "server.pid_file=\(pidFile)"])
        defer { server.cleanUp() }
        let socketPath = server.folder + "/k.sock"

        var st = stat()
        #expect(lstat(socketPath, &st) == 0 && st.st_mode & 0o777 == 0o660)
        #expect((try? String(contentsOfFile: pidFile, encoding: .utf8)) == "\(server.pid)\n")

        let reply = try client.get("/hello/world.jpg")
        #expect(reply.status == 200)
        #expect(reply.bodyText.hasPrefix("kiln worker "))
        #expect(reply.bodyText.hasSuffix(": /hello/world.jpg\n"))
        #expect(reply.headers["content-type"] == "text/plain; charset=utf-8")
        let head = try client.get("/hello/world.jpg", method: "HEAD")
        #expect(head.status == 200 && head.body.isEmpty && head.headers["content-length"] == String(reply.body.count))

        // Worker PIDs: the master's children, and the answering process is one of them.
        let workers = server.children()
        #expect(workers.count == 2)
        let answering = pid_t(reply.bodyText.dropFirst("kiln worker ".count).prefix { $0.isNumber }) ?? -1
        #expect(workers.contains(answering))

        // A worker that dies is replaced within a second or two.
        let victim = workers.min()!
        kill(victim, SIGKILL)
        #expect(ServerProcess.wait(timeout: 2) { let c = server.children(); return c.count == 2 && !c.contains(victim) })
        #expect(server.log.contains("was killed by SIGKILL"))

        // An idle worker told to stop leaves accept at once (and is replaced as well).
        let idle = server.children().min()!
        kill(idle, SIGTERM)
        #expect(ServerProcess.wait(timeout: 1) { !ServerProcess.isAlive(idle) })
        #expect(ServerProcess.wait(timeout: 2) { server.children().count == 2 })
        #expect(try client.get("/again").status == 200)

        // Stop during a slow request: the request finishes, then everything exits.
        let current = server.children()
        let (done, box) = inBackground(client, "/slow?sleep=800")
        #expect(waitForStatus(statusClient(server), busy(with: "/slow")), "the slow request never reached a worker")
        server.signal(SIGTERM)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.error == nil)
        #expect(box.reply?.status == 200)
        #expect(box.reply?.sawEndRequest == true)
        #expect(box.reply?.bodyText.hasSuffix(": /slow?sleep=800\n") == true)
        #expect(server.waitForExit(timeout: 5) == 0)
        #expect(current.allSatisfy { !ServerProcess.isAlive($0) })
        #expect(access(socketPath, F_OK) != 0)
        #expect(access(pidFile, F_OK) != 0)
        #expect(server.log.contains("master \(server.pid) stopped"))
    }

    @Test func reloadStartsANewGenerationAndKeepsTheOldOneOnBadSettings() throws {
        let folder = try TemporaryFile.folder()
        let config = folder + "/kiln.toml"
        try "[server]\nworkers = 2\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (server, client) = try start(["--config", config], workers: nil)
        defer { server.cleanUp(); try? FileManager.default.removeItem(atPath: folder) }

        // An edited file is not used before SIGHUP: a replacement worker keeps the validated settings.
        try "[server]\nworkers = 2\nbogus = 1\n".write(toFile: config, atomically: true, encoding: .utf8)
        let victim = server.children().min()!
        let survivor = server.children().subtracting([victim])
        kill(victim, SIGKILL)
        #expect(ServerProcess.wait(timeout: 3) { let c = server.children(); return c.count == 2 && !c.contains(victim) })
        // The replacement serves (workers take turns in accept): it did not read the edited file.
        let replacement = server.children().subtracting(survivor)
        #expect(ServerProcess.wait(timeout: 5) {
            guard let pid = replacement.first, let text = try? client.get("/replaced").bodyText else { return false }
            return text.hasPrefix("kiln worker \(pid): ")
        }, "the replacement worker \(replacement) never answered: \(server.log)")
        #expect(server.children().count == 2)
        #expect(!server.log.contains("invalid configuration"))
        #expect(try client.get("/replaced").status == 200)

        // Invalid settings: logged, and the running workers stay.
        let first = server.children()
        server.signal(SIGHUP)
        #expect(ServerProcess.wait(timeout: 3) { server.log.contains("reload failed") })
        #expect(server.log.contains("unknown setting server.bogus (file \(config):3)"))
        #expect(server.children() == first)
        #expect(try client.get("/still").status == 200)

        // Valid settings: a new generation of three, the old one drains and exits.
        try "[server]\nworkers = 3\n".write(toFile: config, atomically: true, encoding: .utf8)
        let (done, box) = inBackground(client, "/during-reload?sleep=600")
        #expect(waitForStatus(statusClient(server), busy(with: "/during-reload")), "the request never reached a worker")
        server.signal(SIGHUP)
        #expect(ServerProcess.wait(timeout: 3) { let c = server.children(); return c.count == 3 && c.isDisjoint(with: first) })
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.reply?.status == 200)
        #expect(first.allSatisfy { !ServerProcess.isAlive($0) })
        #expect(server.log.contains("generation 2 started"))
        #expect(try client.get("/after").status == 200)
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 5) == 0)
    }

    @Test func maxRequestsRecyclesAWorker() throws {
        let (server, client) = try start(["--set", "server.max_requests=2"], workers: 1)
        defer { server.cleanUp() }
        // The readiness probe in `start` was request 1 of the first worker.
        let a = try client.get("/2").bodyText
        let b = try client.get("/3").bodyText
        let c = try client.get("/4").bodyText
        func pid(_ s: String) -> String { String(s.dropFirst("kiln worker ".count).prefix { $0.isNumber }) }
        #expect(pid(a) != pid(b))
        #expect(pid(b) == pid(c))
        #expect(server.log.contains("exited with status 0"))
        server.signal(SIGINT)
        #expect(server.waitForExit(timeout: 5) == 0)
    }

    @Test func crashLoopSlowsRespawnsToOnePerSecond() throws {
        let (server, client) = try start([], workers: 1)
        defer { server.cleanUp() }
        // 11 crashes within 10 s (each replacement is killed as soon as it appears).
        for _ in 0..<11 {
            var child: pid_t = 0
            #expect(ServerProcess.wait(timeout: 3) { if let c = server.children().first { child = c; return true }; return false })
            kill(child, SIGKILL)
            _ = ServerProcess.wait(timeout: 2) { !server.children().contains(child) }
        }
        #expect(ServerProcess.wait(timeout: 2) { server.log.contains("crash loop") })
        // Replacements now come one per second.
        var child: pid_t = 0
        #expect(ServerProcess.wait(timeout: 3) { if let c = server.children().first { child = c; return true }; return false })
        kill(child, SIGKILL)
        let t0 = Date()
        #expect(ServerProcess.wait(timeout: 3) { let c = server.children(); return !c.isEmpty && !c.contains(child) })
        #expect(Date().timeIntervalSince(t0) > 0.7)
        #expect(try client.get("/alive").status == 200)
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 5) == 0)
    }

    @Test func shutdownTimeoutKillsARequestThatTakesTooLong() throws {
        let (server, client) = try start(["--set", "server.shutdown_timeout=300ms"], workers: 1)
        defer { server.cleanUp() }
        let (done, box) = inBackground(client, "/stuck?sleep=5000")
        #expect(waitForStatus(statusClient(server), busy(with: "/stuck")), "the request never reached the worker")
        let t0 = Date()
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 5) == 0)
        #expect(Date().timeIntervalSince(t0) < 2)
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(box.reply?.status != 200)
        #expect(server.log.contains("SIGKILL"))
    }

    /// One worker busy, two connections queued behind it when SIGTERM arrives: all three are
    /// answered (the worker drains the queue), a new connection is refused at once (the socket
    /// file is gone), and the master exits.
    @Test func stopAnswersTheQueuedConnections() throws {
        let (server, client) = try start(["--set", "server.shutdown_timeout=20s"], workers: 1)
        defer { server.cleanUp() }
        try stopWithQueue(server, client, status: statusClient(server))
        #expect(access(server.folder + "/k.sock", F_OK) != 0)
    }

    /// The same over TCP: the queued connections are answered too.
    @Test func stopAnswersTheQueuedConnectionsOverTCP() throws {
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, len) } }
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        let port = UInt16(bigEndian: sa.sin_port)
        close(probe)
        let folder = try TemporaryFile.folder()
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:\(port)", "--workers", "1",
                                        "--set", "server.shutdown_timeout=20s"], folder: folder)
        defer { server.cleanUp() }
        let client = FastCGITestClient(target: .tcp("127.0.0.1", port))
        #expect(ServerProcess.wait(timeout: 10) { (try? client.get("/tcp"))?.status == 200 })
        try stopWithQueue(server, client, status: statusClient(server, tcpPort: port))
    }

    func stopWithQueue(_ server: ServerProcess, _ client: FastCGITestClient, status: FastCGITestClient) throws {
        let first = inBackground(client, "/busy?sleep=1500")
        #expect(waitForStatus(status, busy(with: "/busy")), "the first request never reached the worker")
        let waiting = [inBackground(client, "/queued1?sleep=300"), inBackground(client, "/queued2?sleep=300")]
        #expect(waitForStatus(status, queued(2)), "the other two never waited in the listen queue")
        server.signal(SIGTERM)
        for (i, (done, box)) in ([first] + waiting).enumerated() {
            #expect(done.wait(timeout: .now() + 10) == .success)
            #expect(box.error == nil, "request \(i): \(String(describing: box.error))")
            #expect(box.reply?.status == 200 && box.reply?.sawEndRequest == true, "request \(i)")
        }
        #expect(server.waitForExit(timeout: 10) == 0)
        #expect(server.log.contains("answered 2 queued connections after the stop signal"), "\(server.log)")
        #expect(!server.log.contains("SIGKILL"))
    }

    @Test func workersExitWhenTheMasterIsKilled() throws {
        let (server, client) = try start([])
        defer { server.cleanUp() }
        _ = client
        let workers = server.children()
        server.signal(SIGKILL)
        _ = server.waitForExit(timeout: 5)
        #expect(ServerProcess.wait(timeout: 2) { workers.allSatisfy { !ServerProcess.isAlive($0) } })

        // The socket file is left behind; a new master replaces the stale socket.
        let again = try ServerProcess(["serve", "--listen", "unix:" + server.folder + "/k.sock", "--workers", "1"], folder: server.folder)
        defer { again.cleanUp() }
        #expect(ServerProcess.wait(timeout: 10) { (try? client.get("/new")) != nil })
        again.signal(SIGTERM)
        #expect(again.waitForExit(timeout: 5) == 0)
    }

    @Test func tcpListen() throws {
        // Find a free port, then let kiln bind it.
        let probe = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(probe, $0, len) } }
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(probe, $0, &len) } }
        let port = UInt16(bigEndian: sa.sin_port)
        close(probe)

        let folder = try TemporaryFile.folder()
        let server = try ServerProcess(["serve", "--listen", "127.0.0.1:\(port)", "--workers", "1"], folder: folder)
        defer { server.cleanUp() }
        let client = FastCGITestClient(target: .tcp("127.0.0.1", port))
        #expect(ServerProcess.wait(timeout: 10) { (try? client.get("/tcp"))?.status == 200 })
        server.signal(SIGTERM)
        #expect(server.waitForExit(timeout: 5) == 0)
    }

    @Test(arguments: [
        (["--workers", "0"], [String: String](), "server.workers"),
        (["--set", "nope.key=1"], [:], "unknown setting nope.key"),
        (["--socket-mode", "0999"], [:], "server.socket_mode"),
        ([], ["KILN_SERVER_BACKLOG": "lots"], "environment KILN_SERVER_BACKLOG"),
        (["--config", "/nonexistent/kiln.conf"], [:], "cannot read configuration"),
        (["--log-level", "loud"], [:], "log.level"),
        (["--set", "server.socket_owner=no-such-user-kiln"], [:], "no user named"),
        (["--set", "cache.shared=https://store/x/"], [:], "cache.shared"),
        (["--set", "cache.shared=s3://kiln-cache/fleet/"], ["AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""],
         "cache.shared = s3://kiln-cache/fleet/ but there are no S3 credentials"),
    ])
    func invalidConfigurationExitsWithStatus2(_ args: [String], _ env: [String: String], _ expected: String) throws {
        let folder = try TemporaryFile.folder()
        let server = try ServerProcess(["serve", "--listen", "unix:\(folder)/k.sock"] + args, folder: folder, environment: env)
        defer { server.cleanUp() }
        #expect(server.waitForExit(timeout: 10) == 2)
        let lines = server.log.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("kiln: ") == true)
        #expect(server.log.contains(expected))
        #expect(access(folder + "/k.sock", F_OK) != 0)
    }

    @Test func refusesToReplaceAFileThatIsNotASocket() throws {
        let folder = try TemporaryFile.folder()
        let path = folder + "/k.sock"
        try "keep me".write(toFile: path, atomically: true, encoding: .utf8)
        let server = try ServerProcess(["serve", "--listen", "unix:" + path, "--workers", "1"], folder: folder)
        defer { server.cleanUp() }
        #expect(server.waitForExit(timeout: 10) == 2)
        #expect(server.log.contains("not a socket"))
        #expect((try? String(contentsOfFile: path, encoding: .utf8)) == "keep me")
    }
}
