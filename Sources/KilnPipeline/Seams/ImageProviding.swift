import KilnModel

/// What a front end asks of the pipeline for one request (KilnHTTP's `ImageHandler`): the image
/// for a request, from a cache or a render, or from a substitute source (a fallback image), and
/// the bookkeeping around each request. `ImagePipeline` is the default; a front end's tests
/// stand in for it to drive their mapping of results and failures to answers.
public protocol ImageProviding: AnyObject {
    /// Told before each stage of a request (a worker's scoreboard, metrics); nil: nobody.
    var observer: (any RenderObserving)? { get set }
    /// The encoder defaults (`[output]`): what a URL without `strip:` keeps, by who wrote it.
    var output: OutputConfiguration { get }
    /// A request reached this worker now (`ImagePipeline.requestBegan`).
    func requestBegan()
    /// The image for `request` from a cache or a render; `accepted`: what the client accepts of
    /// the offered formats. Every failure is a `PipelineFailure`.
    func image(for request: ImageRequest, accepted: FormatNegotiation) throws(PipelineFailure) -> PipelineResult
    /// `request` rendered from `substitute` instead of its source (a fallback image).
    func image(for request: ImageRequest, accepted: FormatNegotiation, substitute: SubstituteImage) throws(PipelineFailure) -> PipelineResult
    /// After the answer was sent: writes for the shared store, a sweep of the disk cache.
    @discardableResult
    func afterResponse() -> SweepStats?
    /// The stages `afterResponse` ran (`store.write`), for the request's trace, handed over once.
    func takeLateIntervals() -> [Timeline.Interval]
    /// Before the process exits: waits up to `timeout` seconds for a sweep.
    @discardableResult
    func finish(timeout: Double) -> SweepStats?
}

extension ImageProviding {
    public func takeLateIntervals() -> [Timeline.Interval] { [] }
}

extension ImagePipeline: ImageProviding {
    public func takeLateIntervals() -> [Timeline.Interval] { cache?.takeIntervals() ?? [] }
}
