import KilnModel

/// What `ImagePipeline.image(for:accepted:)` answers: the encoded image, its format, digest and
/// source version, where it came from and the phases it took.
public struct PipelineResult: Sendable {
    /// The encoded bytes, format, digest and source version, as the caches keep them.
    public var image: CachedImage
    /// Memory, disk, coalesced or rendered.
    public var outcome: CacheOutcome
    /// The phases of this request (`Server-Timing`): the render's phases and `store` for a miss,
    /// `cache` or `wait` otherwise.
    public var timeline: Timeline

    public var data: [UInt8] { image.data }
    /// The encoded format (nil only for an original, which the pipeline never answers with).
    public var format: ImageFormat? { image.format }
    /// The document kind of an `f:json`, `f:blurhash` or `f:thumbhash` answer (then `format` is nil).
    public var document: DocumentKind? { image.document }
    /// The result's identity (32 hex digits).
    public var digest: String { image.digest }
    /// The source's modification time in whole seconds since the epoch.
    public var sourceModified: Int64 { image.sourceModified }

    public init(image: CachedImage, outcome: CacheOutcome, timeline: Timeline) {
        self.image = image
        self.outcome = outcome
        self.timeline = timeline
    }
}
