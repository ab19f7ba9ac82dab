import KilnHTTP
import Glibc
import KilnPOSIX

/// Test instrumentation for the process layer, off by default: `debug.echo_handler = true` makes
/// every worker answer with its PID instead of rendering, so the master/worker tests (respawn,
/// reload, drain, recycle) and `scripts/bench` can use requests of an exact duration. Never enable
/// it in production.
///
/// Answers `200 text/plain "kiln worker <pid>: <uri>"`. For tests of the process layer: a URI with
/// `sleep=<ms>` (or just `sleep`: 2000 ms) answers after that long; `bytes=<n>` pads the body to n bytes.
public struct EchoHandler: RequestHandling {
    public init() {}

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        if request.uri.contains("sleep") {
            Sleep.milliseconds(EchoHandler.number(after: "sleep=", in: request.uri) ?? 2000)
        }
        var body = Array("kiln worker \(getpid()): \(request.uri)\n".utf8)
        if let n = EchoHandler.number(after: "bytes=", in: request.uri), n > body.count, n <= 64 << 20 {
            body += [UInt8](repeating: UInt8(ascii: "."), count: n - body.count)
        }
        return HTTPResponse(status: 200, headers: [
            (HeaderName.contentType, "text/plain; charset=utf-8"),
            (HeaderName.contentLength, String(body.count)),
        ], body: body)
    }

    static func number(after key: String, in uri: String) -> Int? {
        guard let r = uri.firstRange(of: key) else { return nil }
        return Int(uri[r.upperBound...].prefix { $0.isNumber })
    }
}
