import Dispatch
import Foundation
import Glibc
import KilnModel
import Logging
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

/// `server.allowed_peers` (CIDR matching, parsing) and `server.peer_secret` (config, constant-time
/// check, 403 over a real TCP connection; a peer outside the list gets its connection closed unread).
@Suite(.serialized) struct PeerAccessTests {
    static func v4(_ s: String) -> [UInt8] { IPNetwork.parseAddress(s)! }

    @Test func ipv4Networks() throws {
        let net = try #require(IPNetwork(parsing: "10.77.0.0/24"))
        #expect(net.contains(Self.v4("10.77.0.1")) && net.contains(Self.v4("10.77.0.255")))
        #expect(!net.contains(Self.v4("10.77.1.1")) && !net.contains(Self.v4("11.77.0.1")))
        let host = try #require(IPNetwork(parsing: " 10.77.0.1 "))
        #expect(host.prefixLength == 32 && host.description == "10.77.0.1")
        #expect(host.contains(Self.v4("10.77.0.1")) && !host.contains(Self.v4("10.77.0.2")))
        // Bits after the prefix are ignored, as nginx's `allow` does.
        let odd = try #require(IPNetwork(parsing: "10.1.2.3/12"))
        #expect(odd.description == "10.0.0.0/12")
        #expect(odd.contains(Self.v4("10.15.255.255")) && !odd.contains(Self.v4("10.16.0.0")))
        let any = try #require(IPNetwork(parsing: "0.0.0.0/0"))
        #expect(any.contains(Self.v4("203.0.113.9")))
        #expect(!any.contains(Self.v4("::1")), "an IPv4 network never matches an IPv6 peer")
        let slash31 = try #require(IPNetwork(parsing: "192.168.1.6/31"))
        #expect(slash31.contains(Self.v4("192.168.1.7")) && !slash31.contains(Self.v4("192.168.1.8")))
    }

    @Test func ipv6Networks() throws {
        let ula = try #require(IPNetwork(parsing: "fd00::/8"))
        #expect(ula.contains(Self.v4("fd12:3456::1")) && !ula.contains(Self.v4("fe80::1")))
        let loop = try #require(IPNetwork(parsing: "[::1]"))
        #expect(loop.prefixLength == 128 && loop.contains(Self.v4("::1")) && !loop.contains(Self.v4("::2")))
        let odd = try #require(IPNetwork(parsing: "2001:db8:abcd:12ff::7/52"))
        #expect(odd.description == "2001:db8:abcd:1000::/52")
        #expect(odd.contains(Self.v4("2001:db8:abcd:1fff::1")) && !odd.contains(Self.v4("2001:db8:abcd:2000::")))
        #expect(!ula.contains(Self.v4("10.0.0.1")))
        #expect(IPNetwork.loopback.map(\.description) == ["127.0.0.0/8", "::1"])
    }

    @Test(arguments: ["", "localhost", "10.0.0.0/33", "::/129", "10.0.0/8", "10.0.0.1/-1", "10.0.0.1/x",
                      "300.1.1.1", "fd00::/8/8", "10.0.0.1:9000", "*"])
    func invalidNetworks(_ raw: String) {
        #expect(IPNetwork(parsing: raw) == nil)
    }

    @Test func lists() throws {
        let list = try #require(IPNetwork.parseList("10.77.0.1, 10.0.0.0/8 fd00::/8,,"))
        #expect(IPNetwork.formatList(list) == "10.77.0.1,10.0.0.0/8,fd00::/8")
        #expect(IPNetwork.parseList(IPNetwork.formatList(list)) == list)
        #expect(IPNetwork.parseList("") == nil, "an empty list would refuse everyone")
        #expect(IPNetwork.parseList("10.0.0.1,nginx.internal") == nil)
        let access = PeerAccess(allowedPeers: list)
        #expect(access.refusedPeer(Self.v4("10.200.3.4")) == nil)
        #expect(access.refusedPeer(Self.v4("192.168.0.1")) == "192.168.0.1")
        #expect(access.refusedPeer(Self.v4("fe80::1")) == "fe80::1")
    }

    @Test func configuration() throws {
        let defaults = try KilnConfiguration(ConfigValues())
        #expect(defaults.server.allowedPeers == IPNetwork.loopback)
        #expect(try defaults.server.resolvedPeerSecret() == "")
        #expect(try PeerAccess(defaults.server).secret == nil)
        let secret = "0123456789abcdef0123456789abcdef"
        let c = try KilnConfiguration(ConfigValues([
            "server.allowed_peers": "10.77.0.1,fd00::/8", "server.peer_secret": secret]))
        #expect(c.server.allowedPeers.map(\.description) == ["10.77.0.1", "fd00::/8"])
        #expect(try c.server.resolvedPeerSecret() == secret)
        #expect(try PeerAccess(c.server).secret == Array(secret.utf8))

        let file = try TemporaryFile.write(secret + "\n")
        defer { unlink(file) }
        let fromFile = try KilnConfiguration(ConfigValues(["server.peer_secret_file": file]))
        #expect(try fromFile.server.resolvedPeerSecret() == secret, "the file's final newline is not part of the secret")
        #expect(throws: ConfigError.self) {
            try KilnConfiguration(ConfigValues(["server.peer_secret_file": file, "server.peer_secret": secret]))
        }
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["server.peer_secret_file": "/nonexistent/kiln-secret"])) }
        let short = try TemporaryFile.write("short\n")
        defer { unlink(short) }
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["server.peer_secret_file": short])) }
    }

    @Test(arguments: [("server.allowed_peers", ""), ("server.allowed_peers", "10.0.0.0/40"),
                      ("server.allowed_peers", "nginx"), ("server.peer_secret", "too-short"),
                      ("server.peer_secret", "has a space in it, sixteen+"), ("server.peer_secret", String(repeating: "a", count: 1025))])
    func invalidValues(_ key: String, _ value: String) {
        do {
            _ = try ServerConfiguration(ConfigValues([key: value], origin: "test"))
            Issue.record("accepted \(key) = \(value)")
        } catch {
            let text = "\(error)"
            #expect(text.contains(key))
            if key == "server.peer_secret" { #expect(!text.contains(value), "a secret never appears in an error: \(text)") }
        }
    }

    @Test func secretCheck() {
        let access = PeerAccess(allowedPeers: IPNetwork.loopback, secret: Array("s3cret-s3cret-s3cret".utf8))
        #expect(throws: PeerAccessError.missingSecret) { try access.check(params: ["REQUEST_URI": "/"]) }
        #expect(throws: PeerAccessError.wrongSecret) { try access.check(params: ["KILN_PEER_SECRET": "s3cret-s3cret-s3creT"]) }
        #expect(throws: PeerAccessError.wrongSecret) { try access.check(params: ["KILN_PEER_SECRET": "s3cret-s3cret-s3cret-"]) }
        #expect(throws: PeerAccessError.wrongSecret) { try access.check(params: ["KILN_PEER_SECRET": ""]) }
        // A client's header arrives as HTTP_KILN_PEER_SECRET: not the param.
        #expect(throws: PeerAccessError.missingSecret) { try access.check(params: ["HTTP_KILN_PEER_SECRET": "s3cret-s3cret-s3cret"]) }
        #expect(throws: Never.self) { try access.check(params: ["KILN_PEER_SECRET": "s3cret-s3cret-s3cret"]) }
        #expect(throws: Never.self) { try PeerAccess().check(params: [:]) }
        #expect(PeerAccess.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!PeerAccess.constantTimeEquals([1, 2, 3], [1, 2]) && !PeerAccess.constantTimeEquals([], [0]))
        let mapped = ErrorMapping.map(PeerAccessError.wrongSecret as any Error)
        #expect(mapped.status == 403 && !mapped.message.contains("\n"))
    }

    /// A TCP responder on 127.0.0.1 with a secret: 403 without it or with a wrong one (nothing
    /// handled), 200 with it; with an allow-list without loopback, the connection is closed unread.
    @Test func overTCP() throws {
        var config = ServerConfiguration()
        config.listen = .tcp(host: "127.0.0.1", port: 0)
        let socket = try ListeningSocket.open(config)
        defer { socket.close() }
        let port = try Self.boundPort(socket.fd)
        let fd = socket.fd
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let responder = FastCGIResponder(listenFD: fd, logger: Logger(label: "test"))
            responder.peerAccess = PeerAccess(allowedPeers: IPNetwork.loopback, secret: Array("a-peer-secret-of-22-ch".utf8))
            box.outcome = responder.serve(handler: EchoHandler(), maxRequests: 3) { false }
            done.signal()
        }
        thread.start()
        let client = FastCGITestClient(target: .tcp("127.0.0.1", port))
        var params = ["REQUEST_METHOD": "GET", "REQUEST_URI": "/w:10/a.jpg", "REMOTE_ADDR": "127.0.0.1"]
        let missing = try client.request(params: params)
        #expect(missing.status == 403 && missing.bodyText.contains("KILN_PEER_SECRET") && !missing.bodyText.contains("GET /w:10"))
        #expect(missing.headers["cache-control"] == "no-store")
        params["KILN_PEER_SECRET"] = "a-peer-secret-of-22-cH"
        let wrong = try client.request(params: params)
        #expect(wrong.status == 403 && !wrong.bodyText.contains("a-peer-secret"))
        params["KILN_PEER_SECRET"] = "a-peer-secret-of-22-ch"
        let right = try client.request(params: params)
        #expect(right.status == 200 && right.bodyText.hasPrefix("GET /w:10/a.jpg"))
        #expect(done.wait(timeout: .now() + 10) == .success)

        let refusedThread = Thread {
            let responder = FastCGIResponder(listenFD: fd, logger: Logger(label: "test"))
            responder.peerAccess = PeerAccess(allowedPeers: [IPNetwork(parsing: "10.0.0.0/8")!])
            box.outcome = responder.serve(handler: EchoHandler(), maxRequests: 1) { responder.refusals.count >= 1 }
            done.signal()
        }
        refusedThread.start()
        #expect(throws: (any Error).self) {
            let reply = try client.get("/w:10/a.jpg")
            if !reply.sawEndRequest { throw FastCGITestClient.Failure(description: "no answer") }
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(box.outcome == .stopRequested)
    }

    static func boundPort(_ fd: Int32) throws -> UInt16 {
        var sa = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafeMutablePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { throw FastCGITestClient.Failure(description: "getsockname failed") }
        return UInt16(bigEndian: sa.sin_port)
    }
}
