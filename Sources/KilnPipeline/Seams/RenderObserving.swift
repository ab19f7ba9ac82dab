import KilnModel

/// Told where a request is, before each stage (Nuke's task events, synchronously). A worker
/// publishes the stage in the scoreboard (so the master can name it when the request is slow or
/// killed at its deadline) and checks that the client is still waiting: throwing
/// `PipelineFailure(.cancelled, ...)` stops work nobody will read.
public protocol RenderObserving: AnyObject {
    /// The request enters `stage`; `detail` says more (the processor), may be empty.
    func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure)
    /// A render read its source: `bytes` of `format` (for metrics).
    func sourceRead(format: ImageFormat, bytes: Int)
    /// A render encoded its result.
    func resultEncoded(format: ImageFormat, bytes: Int)
    /// The disk cache was swept after an answer.
    func swept(_ stats: SweepStats)
    /// The render lock was taken (or given up on) after the `wait` stage; `waited`: another
    /// process held it first.
    func lockTaken(waited: Bool)
    /// The shared result store was looked up (`SharedCaching`; for metrics).
    func sharedLookup(_ lookup: SharedLookup)
    /// A result was written to the shared result store, or not, after an answer.
    func sharedWrite(_ write: SharedWrite)
    /// A request to an origin the source stage made, told after the request (`SourceActivity`).
    func originFetched(_ fetch: OriginFetch)
}

extension RenderObserving {
    public func enter(_ stage: RenderStage) throws(PipelineFailure) {
        try enter(stage, detail: "")
    }

    public func sourceRead(format: ImageFormat, bytes: Int) {}
    public func resultEncoded(format: ImageFormat, bytes: Int) {}
    public func swept(_ stats: SweepStats) {}
    public func lockTaken(waited: Bool) {}
    public func sharedLookup(_ lookup: SharedLookup) {}
    public func sharedWrite(_ write: SharedWrite) {}
    public func originFetched(_ fetch: OriginFetch) {}
}
