/// Where a request is in the pipeline: what its observer is told before each stage (a worker
/// publishes it in its scoreboard slot, where the slow log and the render-deadline kill name it,
/// and checks there that its client is still waiting).
public enum RenderStage: String, Sendable, CaseIterable {
    /// Looking in the memory and disk caches.
    case cache
    /// Waiting for another process rendering the same variant (the render lock).
    case wait
    /// Reading the source.
    case load
    /// Sniffing the type, reading the header, checking the limits and the plan.
    case sniff
    /// Decoding.
    case decode
    /// Converting to sRGB.
    case colour
    /// Running a processor (the detail names it).
    case process
    /// Encoding.
    case encode
    /// Writing the result to the caches.
    case store

    public var name: String { rawValue }
}
