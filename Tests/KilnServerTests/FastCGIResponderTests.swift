import Dispatch
import Foundation
import Glibc
import Logging
import Testing
import KilnTestBytes
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// Echoes what it received, so the test can check the param mapping over a real FastCGI connection.
struct EchoHandler: RequestHandling {
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        if request.uri == "/not-modified" { return HTTPResponse(status: 304, headers: [("ETag", "\"e\"")]) }
        let text = "\(request.method) \(request.uri) accept=\(request.headers["accept"] ?? "-") remote=\(request.remoteAddress)\n"
        // No Content-Length on purpose: the responder adds it.
        return HTTPResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array(text.utf8))
    }
}

final class OutcomeBox: @unchecked Sendable {
    var outcome: FastCGIResponder.Outcome?
}

@Suite(.serialized) struct FastCGIResponderTests {
    @Test func servesGetAndHeadOverARealSocket() throws {
        let dir = try TemporaryFile.folder()
        defer { rmdir(dir) }
        var config = ServerConfiguration()
        config.listen = .unix(path: dir + "/r.sock")
        let socket = try ListeningSocket.open(config)
        defer { socket.close() }
        let fd = socket.fd
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let responder = FastCGIResponder(listenFD: fd, logger: Logger(label: "test"))
            box.outcome = responder.serve(handler: EchoHandler(), maxRequests: 4) { false }
            done.signal()
        }
        thread.start()

        let client = FastCGITestClient(target: .unix(dir + "/r.sock"))
        let get = try client.get("/w_10/a.jpg?x=1", headers: ["Accept": "image/webp"])
        #expect(get.status == 200)
        #expect(get.sawEndRequest)
        #expect(get.bodyText == "GET /w_10/a.jpg?x=1 accept=image/webp remote=127.0.0.1\n")
        #expect(get.headers["content-length"] == String(get.body.count))
        #expect(get.headers["content-type"] == "text/plain")

        let head = try client.get("/w_10/a.jpg", method: "HEAD")
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["content-length"] == String("HEAD /w_10/a.jpg accept=- remote=127.0.0.1\n".utf8.count))

        let notModified = try client.get("/not-modified")
        #expect(notModified.status == 304)
        #expect(notModified.headers["content-length"] == nil)
        #expect(notModified.headers["etag"] == "\"e\"")

        // A client that sends the request and hangs up at once must not hurt the responder.
        let early = try client.connectSocket()
        try client.writeAll(early, FastCGIBytes.request(params: [:]))
        close(early)

        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.outcome == .maxRequestsReached)
    }

    /// Half a request (only BEGIN_REQUEST) is dropped at request_read_timeout and the responder
    /// goes on; a kept connection serves two requests and is dropped when idle.
    @Test func halfSentRequestsAndIdleKeptConnectionsAreBounded() throws {
        let dir = try TemporaryFile.folder()
        defer { rmdir(dir) }
        var config = ServerConfiguration()
        config.listen = .unix(path: dir + "/t.sock")
        let socket = try ListeningSocket.open(config)
        defer { socket.close() }
        let fd = socket.fd
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let responder = FastCGIResponder(listenFD: fd, requestReadTimeout: 0.3, keepaliveTimeout: 0.3, logger: Logger(label: "test"))
            box.outcome = responder.serve(handler: EchoHandler(), maxRequests: 4) { false }
            done.signal()
        }
        thread.start()

        let client = FastCGITestClient(target: .unix(dir + "/t.sock"))
        let half = try client.connectSocket()
        defer { close(half) }
        let started = Date()
        try client.writeAll(half, FastCGIBytes.begin())
        var byte: UInt8 = 0
        #expect(read(half, &byte, 1) == 0) // closed by the responder, not by our 10 s timeout
        let waited = Date().timeIntervalSince(started)
        #expect(waited >= 0.25 && waited < 3, "closed after \(waited) s")
        #expect(try client.get("/after").status == 200)

        // FCGI_KEEP_CONN: two requests on one connection, then idle until dropped.
        let kept = try client.connectSocket()
        defer { close(kept) }
        for id: UInt8 in [1, 2] {
            try client.writeAll(kept, FastCGIBytes.request(id: Int(id), keep: true, params: [("REQUEST_METHOD", "GET")]))
            var got: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 4096)
            while !got.containsEndRequest(id: id) {
                let n = chunk.withUnsafeMutableBytes { read(kept, $0.baseAddress, $0.count) }
                guard n > 0 else { break }
                got += chunk[0..<n]
            }
            #expect(got.containsEndRequest(id: id), "request \(id) on the kept connection")
        }
        let idleStart = Date()
        #expect(read(kept, &byte, 1) == 0)
        let idle = Date().timeIntervalSince(idleStart)
        #expect(idle >= 0.2 && idle < 3, "kept connection closed after \(idle) s idle")
        #expect(try client.get("/last").status == 200)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.outcome == .maxRequestsReached)
    }
}

@Suite(.serialized) struct FastCGIResponderTCPTests {
    /// Over TCP: a normal request, then an AUTHORIZER request that gets FCGI_UNKNOWN_ROLE and a
    /// closed connection (the refusal is not lost to a reset although its params were unread).
    @Test func requestAndRefusalOverTCP() throws {
        var config = ServerConfiguration()
        config.listen = .tcp(host: "127.0.0.1", port: 0)
        let socket = try ListeningSocket.open(config)
        defer { socket.close() }
        var sa = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket.fd, $0, &length) } }
        let port = UInt16(bigEndian: sa.sin_port)
        let fd = socket.fd
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let responder = FastCGIResponder(listenFD: fd, requestReadTimeout: 2, keepaliveTimeout: 2, logger: Logger(label: "test"))
            box.outcome = responder.serve(handler: EchoHandler(), maxRequests: 2) { false }
            done.signal()
        }
        thread.start()

        let client = FastCGITestClient(target: .tcp("127.0.0.1", port))
        #expect(try client.get("/tcp").bodyText.hasPrefix("GET /tcp "))

        let c = try client.connectSocket()
        defer { close(c) }
        try client.writeAll(c, FastCGIBytes.request(role: FastCGIBytes.Role.authorizer, params: [("REQUEST_METHOD", "GET")],
                                                    stdin: Array(repeating: 7, count: 5000)))
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(c, $0.baseAddress, $0.count) }
            guard n > 0 else { break }
            got += chunk[0..<n]
        }
        #expect(got == FastCGIRecords.endRequest(requestID: 1, protocolStatus: FastCGI.ProtocolStatus.unknownRole))
        #expect(try client.get("/tcp2").status == 200)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.outcome == .maxRequestsReached)
    }
}

extension [UInt8] {
    /// Whether an FCGI_END_REQUEST record for `id` is among the records.
    func containsEndRequest(id: UInt8) -> Bool {
        var i = 0
        while count - i >= 8 {
            let length = 8 + (Int(self[i + 4]) << 8 | Int(self[i + 5])) + Int(self[i + 6])
            if self[i + 1] == 3 && self[i + 3] == id { return true }
            i += length
        }
        return false
    }
}


@Suite(.serialized) struct ListeningSocketTests {
    @Test func unixSocketGetsTheModeAndIsRemovedOnClose() throws {
        let dir = try TemporaryFile.folder()
        defer { rmdir(dir) }
        var config = ServerConfiguration()
        config.listen = .unix(path: dir + "/m.sock")
        config.socketMode = 0o600
        let socket = try ListeningSocket.open(config)
        var st = stat()
        #expect(lstat(dir + "/m.sock", &st) == 0)
        #expect(st.st_mode & S_IFMT == S_IFSOCK)
        #expect(st.st_mode & 0o777 == 0o600)
        #expect(socket.fd >= 3)
        // A second server must not steal a socket that is in use.
        #expect(throws: ListenError.self) { try ListeningSocket.open(config) }
        socket.close()
        #expect(access(dir + "/m.sock", F_OK) != 0)
    }

    @Test func staleSocketIsReplacedOtherFilesAreNot() throws {
        let dir = try TemporaryFile.folder()
        defer { rmdir(dir) }
        var config = ServerConfiguration()
        config.listen = .unix(path: dir + "/s.sock")
        // A socket file nobody accepts on (a killed server).
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sa.sun_path) { $0.copyBytes(from: Array((dir + "/s.sock").utf8) + [0]) }
        let rc = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        #expect(rc == 0)
        close(stale)
        let socket = try ListeningSocket.open(config)
        socket.close()

        // A regular file at the path is left alone.
        let fd = open(dir + "/s.sock", O_CREAT | O_WRONLY, 0o644)
        close(fd)
        defer { unlink(dir + "/s.sock") }
        do {
            _ = try ListeningSocket.open(config)
            Issue.record("replaced a regular file")
        } catch {
            #expect(error.description.contains("not a socket"))
        }
        #expect(access(dir + "/s.sock", F_OK) == 0)
    }

    @Test func unknownOwnerIsAConfigurationError() throws {
        var config = ServerConfiguration()
        config.listen = .unix(path: "/tmp/kiln-test-owner.sock")
        config.socketOwner = "no-such-user-kiln"
        do {
            _ = try ListeningSocket.open(config)
            Issue.record("accepted an unknown user")
        } catch {
            #expect(error.isConfiguration)
        }
        #expect(access("/tmp/kiln-test-owner.sock", F_OK) != 0)
    }

    @Test func tcpLoopback() throws {
        var config = ServerConfiguration()
        config.listen = .tcp(host: "127.0.0.1", port: 0) // the kernel picks a free port
        let socket = try ListeningSocket.open(config)
        defer { socket.close() }
        #expect(kiln_is_listening_socket_for_test(socket.fd))
    }
}

import CKilnProcessShims
func kiln_is_listening_socket_for_test(_ fd: Int32) -> Bool { kiln_is_listening_socket(fd) == 1 }
