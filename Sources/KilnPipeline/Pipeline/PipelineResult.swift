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
    /// With `max_bytes:<n>`: whether the answer is at most n bytes (false: even the lowest quality
    /// did not fit, or a PNG/lossless output is larger; `ByteBudget`). Nil without `max_bytes`.
    /// A function of the bytes and the request, so a cache hit says the same as the render did.
    public var fitsByteBudget: Bool?
    /// The quality the `max_bytes` search chose, when this request rendered the result (nil for hits).
    public var quality: Int?
    /// Bytes of the source version the result was made from (a trace's `kiln.source.bytes`).
    public var sourceBytes: Int?

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

extension PipelineResult {
    /// Sets `fitsByteBudget` from the request's `max_bytes` and `quality` from the render.
    mutating func noteByteBudget(_ request: ImageRequest, quality: Int?) {
        fitsByteBudget = request.output.maxBytes.map { image.data.count <= $0 }
        self.quality = quality
    }
}
