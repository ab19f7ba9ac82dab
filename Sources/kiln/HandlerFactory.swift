import Glibc
import KilnCore
import KilnServer
import Logging

// PLACEHOLDER: the pipeline replaces this file with the real ImageHandler wiring. The server layer
// only needs these four members.
enum HandlerFactory {
    /// Settings the handler reads, registered with the configuration loader (unknown keys are errors).
    static let knownKeys: Set<String> = ["source.root"]

    /// Runs in the master before any worker starts (and on SIGHUP): throw to refuse the settings.
    static func validate(_ values: ConfigValues) throws(ConfigError) {}

    /// Runs once in each worker.
    static func makeHandler(_ values: ConfigValues, _ logger: Logger) throws -> any RequestHandling {
        PlaceholderHandler()
    }

    /// `kiln process input spec output`; returns the exit status.
    static func process(input: String, spec: String, output: String, values: ConfigValues, logger: Logger) -> Int32 {
        Diagnostics.writeStderr("kiln process: not yet implemented\n")
        return 1
    }
}

/// Answers `200 text/plain "kiln worker <pid>: <uri>"`. For tests of the process layer: a URI with
/// `sleep=<ms>` (or just `sleep`: 2000 ms) answers after that long; `bytes=<n>` pads the body to n bytes.
struct PlaceholderHandler: RequestHandling {
    func handle(_ request: HTTPRequest) -> HTTPResponse {
        if request.uri.contains("sleep") {
            PlaceholderHandler.sleep(milliseconds: PlaceholderHandler.number(after: "sleep=", in: request.uri) ?? 2000)
        }
        var body = Array("kiln worker \(getpid()): \(request.uri)\n".utf8)
        if let n = PlaceholderHandler.number(after: "bytes=", in: request.uri), n > body.count, n <= 64 << 20 {
            body += [UInt8](repeating: UInt8(ascii: "."), count: n - body.count)
        }
        return HTTPResponse(status: 200, headers: [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", String(body.count)),
        ], body: body)
    }

    static func number(after key: String, in uri: String) -> Int? {
        guard let r = uri.range(of: key) else { return nil }
        return Int(uri[r.upperBound...].prefix { $0.isNumber })
    }

    /// nanosleep returns early on a signal even with SA_RESTART: sleep the remainder.
    static func sleep(milliseconds: Int) {
        var req = timespec(tv_sec: milliseconds / 1000, tv_nsec: (milliseconds % 1000) * 1_000_000)
        var rem = timespec()
        while nanosleep(&req, &rem) != 0 && errno == EINTR { req = rem }
    }
}
