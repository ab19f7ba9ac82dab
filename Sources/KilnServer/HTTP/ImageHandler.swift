import Kiln
import KilnCore
import Logging

/// Answers image requests: parse the spec, fetch the result from the caches or render it through
/// the pipeline (one render per variant across processes), add caching headers, honour
/// conditional requests, map every error to a short text answer.
public final class ImageHandler: RequestHandling {
    let pipeline: ImagePipeline
    let parser: SpecParser
    let http: HTTPConfiguration
    let cache: RenderCoordinator?
    let logger: Logger
    /// The encoder settings part of every cache key, computed once.
    let settingsFingerprint: String

    public init(pipeline: ImagePipeline, parser: SpecParser, http: HTTPConfiguration,
                cache: RenderCoordinator? = nil, logger: Logger) {
        self.pipeline = pipeline
        self.parser = parser
        self.http = http
        self.cache = cache
        self.logger = logger
        self.settingsFingerprint = pipeline.output.cacheFingerprint
    }

    /// Sweeps the disk cache when this worker wrote enough; called after the answer is sent.
    public func afterResponse() {
        cache?.maybeSweep()
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
            let (image, outcome, timeline) = try fetch(imageRequest, accept: request.headers["accept"])
            return response(for: image, outcome: outcome, timeline: timeline, imageRequest, request)
        } catch let failure as RenderFailure {
            logger.info("\(failure.status) \(request.uri): \(failure.message) (\(failure.outcome.headerValue))")
            var r = errorResponse(failure.status, failure.message)
            r.headers.append(("X-Cache", failure.outcome.headerValue))
            return r
        } catch {
            let mapped = ErrorMapping.map(error)
            let level: Logger.Level = mapped.status >= 500 ? .error : .info
            logger.log(level: level, "\(mapped.status) \(request.uri): \(mapped.message)")
            return errorResponse(mapped.status, mapped.message)
        }
    }

    /// The encoded result from a cache or a render, where it came from, and the phases it took.
    func fetch(_ imageRequest: ImageRequest, accept: String?) throws -> (CachedImage, CacheOutcome, Timeline) {
        var timeline = Timeline()
        guard let cache else {
            let rendered = try pipeline.render(imageRequest, accept: accept)
            return (CachedImage(rendered, sourcePath: imageRequest.sourcePath), .miss, rendered.timeline)
        }
        let identity = try pipeline.stages.source.identity(of: imageRequest.sourcePath)
        let key = CacheKey(request: imageRequest, accept: accept, source: identity,
                           settings: settingsFingerprint)
        timeline.mark("key")
        var renderTimeline: Timeline?
        let started = Timeline.now()
        let (image, outcome) = try cache.fetch(key) {
            let rendered = try pipeline.render(imageRequest, accept: accept)
            renderTimeline = rendered.timeline
            return CachedImage(rendered, sourcePath: imageRequest.sourcePath)
        }
        let elapsed = Double(Timeline.now() - started) / 1_000_000
        if let renderTimeline {
            for phase in renderTimeline.phases { timeline.add(phase.name, milliseconds: phase.milliseconds) }
            timeline.add("store", milliseconds: max(0, elapsed - renderTimeline.totalMilliseconds))
        } else {
            timeline.add(outcome == .coalesced ? "wait" : "cache", milliseconds: elapsed)
        }
        return (image, outcome, timeline)
    }

    /// `If-Modified-Since` without `If-None-Match`: a `stat` decides, no render.
    func notModifiedBySource(_ imageRequest: ImageRequest, _ request: HTTPRequest) throws -> HTTPResponse? {
        guard request.headers["if-none-match"] == nil,
              let ims = request.headers["if-modified-since"].flatMap(HTTPDate.parse) else { return nil }
        let identity = try pipeline.stages.source.identity(of: imageRequest.sourcePath)
        guard identity.mtimeSeconds <= ims else { return nil }
        var headers = [("Cache-Control", http.cacheControl),
                       ("Last-Modified", HTTPDate.format(secondsSinceEpoch: identity.mtimeSeconds))]
        if imageRequest.output.format == .auto { headers.append(("Vary", "Accept")) }
        return HTTPResponse(status: 304, headers: headers)
    }

    func response(for image: CachedImage, outcome: CacheOutcome, timeline: Timeline,
                  _ imageRequest: ImageRequest, _ request: HTTPRequest) -> HTTPResponse {
        var headers: [(String, String)] = [
            ("Content-Type", image.contentType),
            ("Content-Length", String(image.data.count)),
            ("Cache-Control", http.cacheControl),
            ("ETag", image.etag),
            ("Last-Modified", HTTPDate.format(secondsSinceEpoch: image.lastModified)),
            ("X-Cache", outcome.headerValue),
        ]
        if imageRequest.output.format == .auto { headers.append(("Vary", "Accept")) }
        if http.serverTiming { headers.append(("Server-Timing", timeline.serverTimingHeader)) }
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
