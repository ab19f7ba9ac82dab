import Glibc
import Testing
import KilnModel
import KilnPOSIX
@testable import KilnFastCGI
@testable import KilnServer

/// `[purge]`, the status socket's purge path check and the command line's FastCGI client.
@Suite struct PurgeEndpointTests {
    @Test func purgeSettingsParseListsAndRefuseBadItems() throws {
        let c = try PurgeConfiguration(ConfigValues([
            "purge.hosts": "10.0.0.5:9001, [::1]:9001,unix:/run/kiln/kiln-status.sock",
            "purge.varnish": "http://127.0.0.1:6081",
            "purge.hooks": "https://api.example.com/purge/{tag}?p={path}",
            "purge.hook_headers": "Authorization: Bearer abc, X-Zone: 7",
            "purge.timeout": "2s",
        ]))
        #expect(c.hosts == [.tcp(host: "10.0.0.5", port: 9001), .tcp(host: "::1", port: 9001), .unix(path: "/run/kiln/kiln-status.sock")])
        #expect(c.varnish == ["http://127.0.0.1:6081"])
        #expect(c.headerPairs.map { "\($0.0)=\($0.1)" } == ["Authorization=Bearer abc", "X-Zone=7"])
        #expect(c.timeout == 2 && c.hasTargets)
        #expect(try !PurgeConfiguration(ConfigValues()).hasTargets)
        for (key, value) in [("purge.hosts", "example.com:9001"), ("purge.hosts", "10.0.0.5:9001,"), ("purge.varnish", "https://edge:6081"),
                             ("purge.varnish", "ftp://x"), ("purge.hooks", "http:///nohost"), ("purge.hooks", "http://a b"),
                             ("purge.hook_headers", "no colon"), ("purge.hook_headers", "Bad Name: v"), ("purge.timeout", "0")] {
            #expect(throws: ConfigError.self, "\(key)=\(value)") { _ = try PurgeConfiguration(ConfigValues([key: value], origin: "test")) }
        }
        #expect(KilnConfiguration.catalog.settings.contains { $0.key == "purge.hosts" })
    }

    @Test func purgeSourcesAreDecodedAndCheckedLikeURLPaths() {
        func path(_ q: String) -> String? { try? Master.purgeSource(query: Substring(q)).get() }
        #expect(path("source=photos%2Fcat.jpg") == "photos/cat.jpg")
        #expect(path("source=/photos/caf%C3%A9%20noir.jpg") == "photos/café noir.jpg")
        #expect(path("x=1&source=a//b.png") == "a/b.png")
        for hostile in ["", "source=", "source=%2F", "source=..%2Fetc%2Fpasswd", "source=a/%2e%2e/b", "source=a%00b", "source=a%0Ab",
                        "source=a%5Cb", "source=%ZZ", "source=%FF", "source=a&source=b", "other=a"] {
            guard case .failure(let refusal) = Master.purgeSource(query: Substring(hostile)) else {
                Issue.record("accepted \(hostile)")
                continue
            }
            #expect(!refusal.message.isEmpty && !refusal.message.contains("\n"), "\(hostile)")
        }
    }

    /// A one-shot FastCGI responder on a unix socket: reads a request, answers `answer`.
    static func serveOnce(_ path: String, answer: [UInt8], seen: UnsafeMutablePointer<Int>) -> pthread_t? {
        unlink(path)
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8))
            raw[path.utf8.count] = 0
        }
        _ = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) } }
        listen(listener, 4)
        let seenAddress = Int(bitPattern: seen)
        return KilnThread.spawn {
            let fd = accept(listener, nil, nil)
            close(listener)
            guard fd >= 0 else { return }
            var reader = FastCGIRequestParser()
            var buffer = [UInt8](repeating: 0, count: 4096)
            loop: while true {
                let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                guard n > 0, let out = try? reader.feed(Array(buffer[..<n])) else { break }
                if let request = out.request {
                    UnsafeMutablePointer<Int>(bitPattern: seenAddress)!.pointee = request.params.count
                    break loop
                }
            }
            var records = FastCGIRecords(requestID: 1)
            answer.withUnsafeBufferPointer { records.appendStdout($0) }
            records.appendEnd()
            _ = records.bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    @Test func fastCGIClientReadsTheAnswerAndIsBoundedInTime() throws {
        let path = "/tmp/kiln-fcgi-client-\(getpid()).sock"
        defer { unlink(path) }
        let seen = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        seen.pointee = 0
        defer { seen.deallocate() }
        let body = String(repeating: "x", count: 70_000)
        let thread = Self.serveOnce(path, answer: Array("Status: 201 Created\r\nContent-Type: text/plain\r\n\r\n\(body)".utf8), seen: seen)
        let r = try FastCGIClient(.unix(path: path), timeout: 10).request("POST", "/_kiln/purge?source=a", params: [("KILN_PEER_SECRET", "s")])
        if let thread { pthread_join(thread, nil) }
        #expect(r.status == 201 && r.headers["content-type"] == "text/plain" && r.text == body)
        #expect(seen.pointee >= 8)
        // Nobody listening: a one-line failure, at once.
        #expect(throws: FastCGIClient.Failure.self) { try FastCGIClient(.unix(path: path + ".none"), timeout: 1).request("GET", "/") }
        // A listener that never answers: the deadline, not a hang.
        let silent = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(silent) }
        var sa = sockaddr_in()
        sa.sin_family = sa_family_t(AF_INET)
        sa.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(silent, $0, length) } }
        listen(silent, 4)
        _ = withUnsafeMutablePointer(to: &sa) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(silent, $0, &length) } }
        let started = MonotonicClock.seconds()
        #expect(throws: FastCGIClient.Failure.self) {
            try FastCGIClient(.tcp(host: "127.0.0.1", port: UInt16(bigEndian: sa.sin_port)), timeout: 0.3).request("GET", "/")
        }
        let took = MonotonicClock.seconds() - started
        #expect(took >= 0.29 && took < 10, "\(took)")
    }

    @Test func clientParsesCGIAnswers() throws {
        let r = try FastCGIClient.parse(Array("Content-Type: text/plain\r\n\r\nok\n".utf8))
        #expect(r.status == 200 && r.text == "ok\n")
        #expect(throws: FastCGIClient.Failure.self) { try FastCGIClient.parse(Array("no header end".utf8)) }
    }
}
