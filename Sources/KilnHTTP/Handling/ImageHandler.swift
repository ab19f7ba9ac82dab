import KilnPipeline
import KilnModel
import KilnPOSIX
import Logging

/// Answers image requests: check the signature and allow-lists and parse the spec
/// (`RequestGate`), refuse an expired URL, ask the pipeline (which owns the caches), add caching
/// headers, honour conditional requests (a 304 for `If-Modified-Since` comes from the cached or
/// rendered variant too, so it carries its `ETag`), map every error (`ErrorMapping`) to a short
/// text answer.
public final class ImageHandler: RequestHandling {
    /// The pipeline (`ImagePipeline`), behind its seam.
    let pipeline: any ImageProviding
    let gate: RequestGate
    let http: HTTPConfiguration
    /// Images answered in place of a missing or broken source (`[fallback]`).
    let fallbacks: FallbackImages
    let logger: Logger
    /// Unix seconds now (tests move it).
    let now: @Sendable () -> Int64

    public init(pipeline: any ImageProviding, gate: RequestGate, http: HTTPConfiguration, fallbacks: FallbackImages = FallbackImages(),
                logger: Logger, now: @escaping @Sendable () -> Int64 = { WallClock.seconds() }) {
        self.pipeline = pipeline
        self.gate = gate
        self.http = http
        self.fallbacks = fallbacks
        self.logger = logger
        self.now = now
    }

    /// Without signing or allow-lists.
    public convenience init(pipeline: any ImageProviding, parser: SpecParser, http: HTTPConfiguration, logger: Logger) {
        self.init(pipeline: pipeline, gate: RequestGate(parser: parser), http: http, logger: logger)
    }

    public func observe(with observer: any RenderObserving) {
        pipeline.observer = observer
    }

    /// Writes the shared store's results and sweeps the disk cache when this worker wrote enough;
    /// called after the answer is sent. Returns the stages that ran (`store.write`).
    @discardableResult
    public func afterResponse() -> [Timeline.Interval] {
        pipeline.afterResponse()
        return pipeline.takeLateIntervals()
    }

    /// Waits (at most 1 s: a replacement worker waits for this one to exit) for a disk cache sweep
    /// this process started, so that its evictions are counted; a longer sweep is cut short by the
    /// exit, which is harmless (it only unlinks whole entries) and the next sweep goes on.
    public func finish() {
        pipeline.finish(timeout: 1)
    }

    /// Every answer carries the phases that ran (`HTTPResponse.timeline`: `spec` for the checks of
    /// the URL, then the pipeline's phases, or `pipeline`
    /// for the time of a pipeline call that failed) and sends them as `Server-Timing`; an error
    /// answer carries its reason for the access line (`AccessLog`), which is the only place it is
    /// logged.
    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = answer(request)
        CORSPolicy(allowOrigin: http.allowOrigin).apply(to: &response, origin: request.headers[HeaderName.Request.origin])
        return response
    }

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        guard request.method == "GET" || request.method == "HEAD" else {
            var r = errorResponse(405, "method \(request.method) not allowed; use GET or HEAD")
            r.headers.append((HeaderName.allow, "GET, HEAD"))
            r.reason = "method \(request.method) not allowed"
            return r
        }
        var timeline = Timeline()
        var response: HTTPResponse
        pipeline.requestBegan()
        do {
            var imageRequest: ImageRequest, provenance: RequestGate.Provenance, redirect: String?
            do {
                let admitted = try gate.admission(request, hints: ClientHints(headers: request.headers, http: http))
                (imageRequest, provenance, redirect) = (admitted.request, admitted.provenance, admitted.onErrorRedirect)
                // What a URL without `strip:` keeps depends on who wrote it: resolved here, into the
                // request (and so its cache key), when the operator's URLs have a default of their own.
                let strip = pipeline.output.defaultStrip(operatorURL: provenance != .unsigned)
                if imageRequest.output.strip == nil, strip != pipeline.output.strip { imageRequest.output.strip = strip }
                // Before the caches: an expired link is refused even when its image is cached.
                if let expires = imageRequest.expires, now() > expires {
                    throw RequestRefusal.expired("this URL expired at \(HTTPDate.format(secondsSinceEpoch: expires))")
                }
            } catch {
                timeline.mark("spec")
                throw error
            }
            timeline.mark("spec")
            let accepted = FormatNegotiation(accept: request.headers[HeaderName.Request.accept], offered: http.autoFormats)
            do {
                let result = try pipeline.image(for: imageRequest, accepted: accepted)
                timeline.append(result.timeline)
                response = self.response(for: result, imageRequest, provenance, request)
                if request.isTraced { response.traceFacts = ImageHandler.traceFacts(of: result, imageRequest, provenance) }
            } catch {
                // A lookup lane's miss: the render workers answer it (no fallback, no error here).
                if RenderHandOff.isHandOff(error) { return RenderHandOff.response(for: request) }
                timeline.mark("pipeline")
                if let answer = fallback(for: error, imageRequest, accepted, provenance, request, &timeline) {
                    response = answer
                } else if let redirect {
                    response = redirectResponse(to: redirect, for: error)
                } else {
                    throw error
                }
            }
        } catch {
            let mapped = ErrorMapping.map(error)
            response = errorResponse(mapped.status, mapped.message)
            if let outcome = mapped.outcome { response.headers.append((HeaderName.xCache, outcome.headerValue)) }
            response.cacheOutcome = mapped.outcome
            response.reason = mapped.logMessage
        }
        if let outcome = response.cacheOutcome { response.traceFacts["kiln.cache"] = .string(outcome.headerValue) }
        response.timeline = timeline
        if http.serverTiming { response.headers.append((HeaderName.serverTiming, timeline.serverTimingHeader)) }
        if !http.timingAllowOrigin.isEmpty { response.headers.append((HeaderName.timingAllowOrigin, http.timingAllowOrigin)) }
        return response
    }

    /// The trace span's facts of an answer from the pipeline: the variant (the canonical request
    /// and the result's digest), who wrote the URL, the sizes and the format.
    static func traceFacts(of result: PipelineResult, _ request: ImageRequest, _ provenance: RequestGate.Provenance) -> TraceFacts {
        var facts = TraceFacts()
        facts["kiln.variant"] = .string(request.canonical)
        facts["kiln.digest"] = .string(result.digest)
        facts["kiln.source"] = .string(request.sourcePath)
        facts["kiln.provenance"] = .string("\(provenance)")
        if let bytes = result.sourceBytes { facts["kiln.source.bytes"] = .int(bytes) }
        facts["kiln.output.bytes"] = .int(result.data.count)
        facts["kiln.output.format"] = .string(result.format?.rawValue ?? result.document?.rawValue ?? "")
        return facts
    }

    /// Whether the answer depends on `Accept` (the hints it depends on: `ClientHints.varyNames`): `f:auto` with formats to negotiate
    /// (`http.auto_formats`). Sent on 200s and 304s alike, whatever class the client fell in, so
    /// a shared cache never hands one class's variant to another.
    func varies(_ imageRequest: ImageRequest) -> Bool {
        imageRequest.output.format == .auto && !http.autoFormats.isEmpty
    }

    /// Whether a conditional request is answered 304 (RFC 9110 §13.2.2): `If-None-Match` when
    /// present (weak comparison), else `If-Modified-Since` against the source's modification time.
    /// An `If-Modified-Since` that is not a date, or is later than now, is ignored (§13.1.3: the
    /// client's date cannot come from this server).
    func notModified(_ request: HTTPRequest, etag: String, lastModified: Int64) -> Bool {
        if let inm = request.headers[HeaderName.Request.ifNoneMatch] { return ImageHandler.matches(inm, etag: etag) }
        guard let ims = request.headers[HeaderName.Request.ifModifiedSince].flatMap(HTTPDate.parse), ims <= now() else {
            return false
        }
        return lastModified <= ims
    }

    /// The fallback answer to a failure of the pipeline (`FallbackImages`): the request rendered
    /// from the fallback file of the failure's class, with the failure's status (or 200), a short
    /// `Cache-Control`, `Kiln-Fallback` and never a 304. Nil when the failure has no fallback, or
    /// when the fallback itself fails: the original error is answered then.
    func fallback(for error: any Error, _ imageRequest: ImageRequest, _ accepted: FormatNegotiation,
                  _ provenance: RequestGate.Provenance, _ request: HTTPRequest, _ timeline: inout Timeline) -> HTTPResponse? {
        guard let (kind, file) = fallbacks.substitute(for: error) else { return nil }
        // A document (`f:json`, `f:blurhash`, `f:thumbhash`) describes the source: a placeholder's
        // description would tell a client that a missing image is a 400×300 PNG.
        guard imageRequest.output.document == nil else { return nil }
        let result: PipelineResult
        do {
            result = try pipeline.image(for: imageRequest, accepted: accepted, substitute: file)
        } catch {
            timeline.mark("fallback")
            logger.warning("fallback image \(file.path) failed: \(ErrorMapping.map(error).logMessage)")
            return nil
        }
        timeline.append(result.timeline)
        let failed = ErrorMapping.map(error)
        var response = self.response(for: result, imageRequest, provenance, request, fallback: kind)
        response.status = fallbacks.status(failed: failed.status)
        response.reason = "fallback (\(kind.rawValue)) for: \(failed.logMessage)"
        return response
    }

    func response(for image: PipelineResult, _ imageRequest: ImageRequest, _ provenance: RequestGate.Provenance,
                  _ request: HTTPRequest, fallback: FallbackImages.Class? = nil) -> HTTPResponse {
        var headers: [(String, String)] = [
            (HeaderName.contentType, image.contentType),
            (HeaderName.contentLength, String(image.data.count)),
        ]
        if let fallback {
            headers += [(HeaderName.cacheControl, fallbacks.cacheControl), (HeaderName.kilnFallback, fallback.rawValue)]
        } else {
            headers += cachePolicy.headers(for: imageRequest, provenance: provenance, now: now())
        }
        headers += [
            (HeaderName.eTag, image.etag),
            (HeaderName.lastModified, HTTPDate.format(secondsSinceEpoch: image.sourceModified)),
            (HeaderName.xCache, image.outcome.headerValue),
        ]
        let hints = ClientHints.varyNames(imageRequest.hintUse, http: http, answered: image.format, lossless: imageRequest.output.lossless)
        let vary = (varies(imageRequest) ? [HeaderName.accept] : []) + hints
        if !vary.isEmpty { headers.append((HeaderName.vary, vary.joined(separator: ", "))) }
        if let fits = image.fitsByteBudget { headers.append((HeaderName.kilnMaxBytes, fits ? "fit" : "exceeded")) }
        // The requested source's tags, on fallbacks too (`SurrogateKeys`).
        headers += SurrogateKeys(http).headers(for: imageRequest)
        headers.append((HeaderName.contentDisposition, ContentDisposition.value(for: imageRequest, format: image.format)))
        var response: HTTPResponse
        // A 304 carries what the 200 would, but the body's own fields (RFC 9110 §15.4.5): ETag,
        // Last-Modified, Cache-Control, Vary.
        if fallback == nil, notModified(request, etag: image.etag, lastModified: image.sourceModified) {
            headers.removeAll { $0.0 == HeaderName.contentType || $0.0 == HeaderName.contentLength || $0.0 == HeaderName.contentDisposition }
            response = HTTPResponse(status: 304, headers: headers)
        } else {
            response = HTTPResponse(status: 200, headers: headers, body: image.data)
        }
        response.cacheOutcome = image.outcome
        return response
    }

    var cachePolicy: CacheControlPolicy {
        CacheControlPolicy(cacheControl: http.cacheControl, cdnCacheControl: http.cdnCacheControl, immutable: http.immutable)
    }

    /// `If-None-Match` list matching (weak comparison, `*` matches anything).
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains { raw in
            var tag = raw.trimmingSpacesAndTabs()
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag = String(tag.dropFirst(2)) }
            return tag == etag
        }
    }

    /// An adapted URL's answer to a failed render (Cloudflare's `onerror=redirect`): `302` to the
    /// source as the URL wrote it, with the error's `Cache-Control` (so no cache keeps it longer
    /// than an error) and the failure as the access line's reason. Built here, after the
    /// pipeline failed: no cache of Kiln's ever holds it.
    func redirectResponse(to location: String, for error: any Error) -> HTTPResponse {
        let failed = ErrorMapping.map(error)
        var response = errorResponse(302, "render failed (\(failed.status)); see \(location)")
        response.headers.append((HeaderName.location, location))
        response.reason = "onerror=redirect for: \(failed.logMessage)"
        return response
    }

    /// The one-line text answer: `message` with its control characters escaped (`OneLineText`),
    /// so a path quoted in it cannot add lines to the body. A 503 says when to retry.
    func errorResponse(_ status: Int, _ message: String) -> HTTPResponse {
        let body = Array((OneLineText.escaped(message) + "\n").utf8)
        var headers = [
            (HeaderName.contentType, "text/plain; charset=utf-8"),
            (HeaderName.contentLength, String(body.count)),
            (HeaderName.cacheControl, http.errorCacheControl),
            (HeaderName.xContentTypeOptions, "nosniff"),
        ]
        if status == 503 { headers.append((HeaderName.retryAfter, "1")) }
        return HTTPResponse(status: status, headers: headers, body: body)
    }
}
