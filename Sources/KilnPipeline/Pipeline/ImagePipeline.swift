import KilnModel
import KilnProcessing

/// Answers image requests (Nuke's `ImagePipeline`): looks in the memory cache, the disk cache,
/// takes the render lock, renders and stores. Owns its caches (`RenderCoordinator`: an
/// `ImageCaching`, a `DataCaching`, a `RenderLocking`); without them every request renders.
///
/// Stages: request → cache key (from the opened source's identity) → caches → read the same
/// handle → sniff → decode → process → encode → caches → result. A source is opened once per
/// request; a hit costs one `open` + `fstat`.
///
/// Synchronous and single-threaded by design: a worker process runs one request at a time.
public final class ImagePipeline {
    public let stages: PipelineStages
    public let limits: LimitsConfiguration
    public let output: OutputConfiguration
    /// The caches and render locks; nil renders every request.
    public let cache: RenderCoordinator?
    /// Told before each stage of a request (a worker's scoreboard and hang-up check); nil: nobody.
    public var observer: (any RenderObserving)?
    public init(stages: PipelineStages, limits: LimitsConfiguration = .init(), output: OutputConfiguration = .init(),
                cache: RenderCoordinator? = nil) {
        self.stages = stages
        self.limits = limits
        self.output = output
        self.cache = cache
    }

    /// The image for `request` from a cache or a render; `accepted` is what the client accepts
    /// of the offered formats (for `f:auto`; the HTTP layer parses `Accept` into it). Every failure, fresh or remembered, is a `PipelineFailure`; one the
    /// caches remember carries its `outcome`.
    public func image(for request: ImageRequest, accepted: FormatNegotiation) throws(PipelineFailure) -> PipelineResult {
        var timeline = Timeline()
        defer { reportOriginFetches() }
        try observer?.enter(.cache)
        // A lookup lane keys local sources only: a remote one's identity may need its origin.
        if cache?.lookupOnly == true, !stages.source.isLocal(request.sourcePath) { throw RenderCoordinator.renderElsewhere }
        let opened: any OpenedSource
        let fetchesBefore = stages.sourceActivity?.count
        do {
            opened = try stages.source.open(request.sourcePath)
        } catch {
            throw PipelineFailure(error)
        }
        if stages.sourceActivity?.count != fetchesBefore { timeline.mark("fetch") }
        return try image(for: request, opened: opened, accepted: accepted, timeline: timeline)
    }

    /// The image for `request` rendered from `opened` (the source the request names, or a
    /// substitute: `ImagePipeline+Substitute.swift`), through the caches; `timeline` holds the
    /// phases so far.
    func image(for request: ImageRequest, opened: any OpenedSource, accepted: FormatNegotiation,
               timeline: Timeline) throws(PipelineFailure) -> PipelineResult {
        var timeline = timeline
        guard let cache else {
            do {
                let rendered = try render(request, from: opened, accepted: accepted)
                var result = PipelineResult(image: CachedImage(rendered, sourcePath: request.sourcePath),
                                            outcome: .miss, timeline: rendered.timeline)
                result.noteByteBudget(request, quality: rendered.quality)
                result.sourceBytes = opened.identity.size
                return result
            } catch {
                throw PipelineFailure(error)
            }
        }
        let key = cacheKey(for: request, accepted: accepted, source: opened.identity)
        let sourceKey = CacheKey.sourceFailures(sourcePath: request.sourcePath, identity: opened.identity)
        timeline.mark("key")
        var renderTimeline: Timeline?
        var quality: Int?
        let started = Timeline.now()
        // A local file's content names it in the shared store (remote sources carry their ETag).
        let digest: (() -> String?)? = cache.shared != nil && opened.identity.inode != 0
            ? { (try? opened.readAll()).map { Digest.sha256Hex($0) } } : nil
        let (image, outcome) = try cache.fetch(key, source: sourceKey, observer: observer, sourceDigest: digest) {
            let rendered = try render(request, from: opened, accepted: accepted, source: sourceKey)
            renderTimeline = rendered.timeline
            quality = rendered.quality
            return CachedImage(rendered, sourcePath: request.sourcePath)
        }
        let elapsed = Double(Timeline.now() - started) / 1_000_000
        if let renderTimeline {
            timeline.append(renderTimeline)
            timeline.add("store", milliseconds: max(0, elapsed - renderTimeline.totalMilliseconds))
        } else {
            timeline.record(outcome == .coalesced ? "wait" : "cache", since: started)
        }
        timeline.append(intervals: cache.takeIntervals())
        var result = PipelineResult(image: image, outcome: outcome, timeline: timeline)
        result.noteByteBudget(request, quality: quality)
        result.sourceBytes = opened.identity.size
        return result
    }

    /// A request reached this worker now: its remote reads must end before its render deadline
    /// (`limits.render_timeout`). The server calls it first thing; without it fetches are bounded
    /// by `source.fetch_timeout` alone (`kiln process`, `kiln warm`).
    public func requestBegan() {
        stages.sourceActivity?.beginRequest()
        cache?.requestBegan()
    }

    /// Hands the remote reads made since the last call to the observer (metrics).
    func reportOriginFetches() {
        stages.sourceActivity?.report(to: observer)
    }

    /// The cache key of `request` for a client sending `accept`, with `source` the version read.
    public func cacheKey(for request: ImageRequest, accepted: FormatNegotiation, source: SourceIdentity) -> CacheKey {
        CacheKey(request: request, accepted: accepted, source: source, output: output,
                 assets: stages.watermarks.identity(for: request.operations))
    }

    /// Writes the results rendered for the request to the shared result store (`cache.shared`),
    /// starts a background sweep of the disk cache when this process wrote enough, and reports
    /// both (and sweeps that finished) to the observer; call it after the response is sent.
    @discardableResult
    public func afterResponse() -> SweepStats? {
        cache?.flushShared(observer: observer)
        let stats = cache?.maybeSweep()
        if let stats { observer?.swept(stats) }
        return stats
    }

    /// Before the process exits: waits up to `timeout` seconds for a background sweep and
    /// reports it.
    @discardableResult
    public func finish(timeout: Double) -> SweepStats? {
        let stats = cache?.finishSweep(timeout: timeout)
        if let stats { observer?.swept(stats) }
        return stats
    }
}
