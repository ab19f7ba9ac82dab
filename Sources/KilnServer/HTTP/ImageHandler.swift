import Kiln
import KilnCore
import Logging

/// Answers image requests: parse the spec, ask the pipeline (which owns the caches), add caching
/// headers, honour conditional requests, map every error (`ErrorMapping`) to a short text answer.
public final class ImageHandler: RequestHandling {
    let pipeline: ImagePipeline
    let parser: SpecParser
    let http: HTTPConfiguration
    let logger: Logger

    public init(pipeline: ImagePipeline, parser: SpecParser, http: HTTPConfiguration, logger: Logger) {
        self.pipeline = pipeline
        self.parser = parser
        self.http = http
        self.logger = logger
    }

    /// Sweeps the disk cache when this worker wrote enough; called after the answer is sent.
    public func afterResponse() {
        pipeline.afterResponse()
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            var r = errorResponse(405, "method \(request.method) not allowed; use GET or HEAD")
            r.headers.append(("Allow", "GET, HEAD"))
            return r
        }
        do {
            let (path, decoded) = request.specPath
            let imageRequest = try parser.parse(path, isDecoded: decoded)
            if let notModified = try notModifiedBySource(imageRequest, request) { return notModified }
            let result = try pipeline.image(for: imageRequest, accept: request.headers["accept"])
            return response(for: result, imageRequest, request)
        } catch {
            let mapped = ErrorMapping.map(error)
            let level: Logger.Level = mapped.status >= 500 ? .error : .info
            let cache = mapped.outcome.map { " (\($0.headerValue))" } ?? ""
            logger.log(level: level, "\(mapped.status) \(request.uri): \(mapped.logMessage)\(cache)")
            var r = errorResponse(mapped.status, mapped.message)
            if let outcome = mapped.outcome { r.headers.append(("X-Cache", outcome.headerValue)) }
            return r
        }
    }

    /// `If-Modified-Since` without `If-None-Match`: a `stat` decides, no render.
    func notModifiedBySource(_ imageRequest: ImageRequest, _ request: HTTPRequest) throws -> HTTPResponse? {
        guard request.headers["if-none-match"] == nil,
              let ims = request.headers["if-modified-since"].flatMap(HTTPDate.parse) else { return nil }
        let version = try pipeline.sourceVersion(for: imageRequest)
        guard version.mtimeSeconds <= ims else { return nil }
        var headers = [("Cache-Control", http.cacheControl),
                       ("Last-Modified", HTTPDate.format(secondsSinceEpoch: version.mtimeSeconds))]
        if imageRequest.output.format == .auto { headers.append(("Vary", "Accept")) }
        return HTTPResponse(status: 304, headers: headers)
    }

    func response(for image: PipelineResult, _ imageRequest: ImageRequest, _ request: HTTPRequest) -> HTTPResponse {
        var headers: [(String, String)] = [
            ("Content-Type", image.contentType),
            ("Content-Length", String(image.data.count)),
            ("Cache-Control", http.cacheControl),
            ("ETag", image.etag),
            ("Last-Modified", HTTPDate.format(secondsSinceEpoch: image.lastModified)),
            ("X-Cache", image.outcome.headerValue),
        ]
        if imageRequest.output.format == .auto { headers.append(("Vary", "Accept")) }
        if http.serverTiming { headers.append(("Server-Timing", image.timeline.serverTimingHeader)) }
        if let inm = request.headers["if-none-match"], ImageHandler.matches(inm, etag: image.etag) {
            headers.removeAll { $0.0 == "Content-Type" || $0.0 == "Content-Length" }
            return HTTPResponse(status: 304, headers: headers)
        }
        return HTTPResponse(status: 200, headers: headers, body: image.data)
    }

    /// `If-None-Match` list matching (weak comparison, `*` matches anything).
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { raw in
            var tag = raw.trimmingCharacters()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            return tag == etag
        }
    }

    func errorResponse(_ status: Int, _ message: String) -> HTTPResponse {
        let body = Array((message + "\n").utf8)
        return HTTPResponse(status: status, headers: [
            ("Content-Type", "text/plain; charset=utf-8"),
            ("Content-Length", String(body.count)),
            ("Cache-Control", http.errorCacheControl),
            ("X-Content-Type-Options", "nosniff"),
        ], body: body)
    }
}

extension Substring {
    func trimmingCharacters() -> String {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return String(s)
    }
}
