import KilnCore

/// What `ImagePipeline.image(for:accept:)` answers: the encoded image with what a response needs,
/// where it came from and the phases it took.
public struct PipelineResult: Sendable {
    /// The encoded bytes, content type, ETag and Last-Modified, as the caches keep them.
    public var image: CachedImage
    /// Memory, disk, coalesced or rendered (`X-Cache`).
    public var outcome: CacheOutcome
    /// The phases of this request (`Server-Timing`): the render's phases and `store` for a miss,
    /// `cache` or `wait` otherwise.
    public var timeline: Timeline

    public var data: [UInt8] { image.data }
    /// `Content-Type`, e.g. `image/webp`.
    public var contentType: String { image.contentType }
    /// `ETag`, quoted.
    public var etag: String { image.etag }
    /// The source's modification time in whole seconds since the epoch.
    public var lastModified: Int64 { image.lastModified }

    public init(image: CachedImage, outcome: CacheOutcome, timeline: Timeline) {
        self.image = image
        self.outcome = outcome
        self.timeline = timeline
    }
}
