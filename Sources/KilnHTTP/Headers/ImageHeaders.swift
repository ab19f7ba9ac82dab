import KilnPipeline
import KilnModel

/// The HTTP words for the pipeline's typed results: the only place they are spelt.
extension CacheOutcome {
    /// The `X-Cache` value.
    public var headerValue: String {
        switch self {
        case .hitMemory: "HIT-MEMORY"
        case .hitDisk: "HIT-DISK"
        case .hitShared: "HIT-SHARED"
        case .miss: "MISS"
        case .coalesced: "COALESCED"
        }
    }
}

extension PipelineResult {
    /// The strong `ETag`: the result's digest, quoted.
    public var etag: String { "\"" + digest + "\"" }
    /// `Content-Type`.
    public var contentType: String { format?.mimeType ?? document?.contentType ?? "application/octet-stream" }
}
