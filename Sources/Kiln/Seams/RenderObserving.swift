/// Told where a request is, before each stage (Nuke's task events, synchronously). A worker
/// publishes the stage in the scoreboard (so the master can name it when the request is slow or
/// killed at its deadline) and checks that the client is still waiting: throwing
/// `PipelineFailure(.abandoned, ...)` stops work nobody will read.
public protocol RenderObserving: AnyObject {
    /// The request enters `stage`; `detail` says more (the processor), may be empty.
    func enter(_ stage: RenderStage, detail: String) throws(PipelineFailure)
}

extension RenderObserving {
    public func enter(_ stage: RenderStage) throws(PipelineFailure) {
        try enter(stage, detail: "")
    }
}
