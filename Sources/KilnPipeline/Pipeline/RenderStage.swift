/// Where a request is: what a worker publishes in the scoreboard, what the slow log and the
/// render-deadline kill name, and where the pipeline checks that its client is still there.
/// The raw values are stored in shared memory: append, never renumber.
public enum RenderStage: UInt32, Sendable, CaseIterable {
    /// Between requests.
    case idle = 0
    /// The request is read; the URL is being checked and parsed.
    case accept = 1
    /// Looking in the memory and disk caches.
    case cache = 2
    /// Waiting for another process rendering the same variant (the render lock).
    case wait = 3
    /// Reading the source.
    case load = 4
    /// Sniffing the type, reading the header, checking the limits and the plan.
    case sniff = 5
    /// Decoding.
    case decode = 6
    /// Converting to sRGB.
    case colour = 7
    /// Running a processor (the detail names it).
    case process = 8
    /// Encoding.
    case encode = 9
    /// Writing the result to the caches.
    case store = 10
    /// Sending the answer.
    case respond = 11

    public var name: String {
        switch self {
        case .idle: "idle"
        case .accept: "accept"
        case .cache: "cache"
        case .wait: "wait"
        case .load: "load"
        case .sniff: "sniff"
        case .decode: "decode"
        case .colour: "colour"
        case .process: "process"
        case .encode: "encode"
        case .store: "store"
        case .respond: "respond"
        }
    }
}
