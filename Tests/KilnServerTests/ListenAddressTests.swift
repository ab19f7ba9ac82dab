import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

@Suite struct ListenAddressTests {
    @Test func unixSocketPath() throws {
        #expect(try ListenAddress(parsing: "unix:/run/kiln/kiln.sock") == .unix(path: "/run/kiln/kiln.sock"))
        #expect(try ListenAddress(parsing: " unix:/tmp/k.sock ") == .unix(path: "/tmp/k.sock"))
        #expect(try ListenAddress(parsing: "unix:/tmp/k.sock").description == "unix:/tmp/k.sock")
        #expect(try ListenAddress(parsing: "unix:/tmp/k.sock").unixPath == "/tmp/k.sock")
    }

    @Test func tcpAddresses() throws {
        #expect(try ListenAddress(parsing: "127.0.0.1:9000") == .tcp(host: "127.0.0.1", port: 9000))
        #expect(try ListenAddress(parsing: "0.0.0.0:1") == .tcp(host: "0.0.0.0", port: 1))
        #expect(try ListenAddress(parsing: "[::1]:9000") == .tcp(host: "::1", port: 9000))
        #expect(try ListenAddress(parsing: "[::1]:9000").description == "[::1]:9000")
        #expect(try ListenAddress(parsing: "127.0.0.1:65535").description == "127.0.0.1:65535")
        #expect(try ListenAddress(parsing: "127.0.0.1:9000").unixPath == nil)
    }

    @Test(arguments: [
        "", "unix:", "9000", "localhost:9000", "127.0.0.1", "127.0.0.1:", "127.0.0.1:0", "127.0.0.1:65536",
        "127.0.0.1:90x", "256.0.0.1:9000", "::1:9000", "[::1]", "[::1]9000", "[nonsense]:9000",
        "tcp://127.0.0.1:9000", "http://127.0.0.1:9000", "unix:/tmp/",
        "unix:/" + String(repeating: "a", count: 120),
    ])
    func rejected(_ text: String) {
        #expect(throws: ListenAddressError.self) { try ListenAddress(parsing: text) }
    }

    @Test func errorNamesTheValueAndTheExpectedForms() {
        do {
            _ = try ListenAddress(parsing: "localhost:9000")
            Issue.record("accepted a host name")
        } catch {
            #expect(error.description.contains("localhost:9000"))
            #expect(error.description.contains("unix:/path/to/kiln.sock"))
        }
    }
}
