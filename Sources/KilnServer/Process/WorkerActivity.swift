import KilnPipeline

/// What a worker is doing, as its scoreboard slot records it: between requests, reading one, in a
/// pipeline stage (`RenderStage`), or sending the answer. These are the scoreboard's own codes:
/// they are stored in shared memory (`kiln_scoreboard.h`), so append, never renumber.
public enum WorkerActivity: UInt32, Sendable, CaseIterable {
    /// Between requests.
    case idle = 0
    /// The request is read; the URL is being checked and parsed.
    case accept = 1
    case cache = 2
    case wait = 3
    case load = 4
    case sniff = 5
    case decode = 6
    case colour = 7
    case process = 8
    case encode = 9
    case store = 10
    /// Sending the answer.
    case respond = 11

    /// The slot code of a pipeline stage.
    public init(_ stage: RenderStage) {
        switch stage {
        case .cache: self = .cache
        case .wait: self = .wait
        case .load: self = .load
        case .sniff: self = .sniff
        case .decode: self = .decode
        case .colour: self = .colour
        case .process: self = .process
        case .encode: self = .encode
        case .store: self = .store
        }
    }

    /// The pipeline stage this is, nil for the worker's own steps.
    public var stage: RenderStage? {
        switch self {
        case .idle, .accept, .respond: nil
        case .cache: .cache
        case .wait: .wait
        case .load: .load
        case .sniff: .sniff
        case .decode: .decode
        case .colour: .colour
        case .process: .process
        case .encode: .encode
        case .store: .store
        }
    }

    /// What the status page, the slow log and the deadline kill call it.
    public var name: String {
        switch self {
        case .idle: "idle"
        case .accept: "accept"
        case .respond: "respond"
        default: stage?.name ?? "idle"
        }
    }
}
