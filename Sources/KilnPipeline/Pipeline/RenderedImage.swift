import KilnModel

/// The result of one render: encoded bytes, their format and identity.
public struct RenderedImage: Sendable {
    public var data: [UInt8]
    /// The encoded format; for a document (`f:json`, …) the source's format, which `document` overrides.
    public var format: ImageFormat
    /// `f:json`, `f:blurhash`, `f:thumbhash`: the bytes are that document, not an image.
    public var document: DocumentKind?
    /// The source version it was made from (for `Last-Modified` and cache keys).
    public var sourceIdentity: SourceIdentity
    /// The result's identity: SHA-256 of the source version and the bytes, truncated to 128 bits
    /// (32 hex digits; the HTTP layer's strong `ETag`). The source version is in it so that a
    /// touched or replaced source gives a new identity even when the output comes out byte for
    /// byte the same.
    public var digest: String
    /// Size of the output in pixels.
    public var size: PixelSize
    public var timeline: Timeline
    /// The quality `max_bytes` chose (`ByteBudget`); nil without a search.
    public var quality: Int?

    public init(data: [UInt8], format: ImageFormat, sourceIdentity: SourceIdentity, size: PixelSize, timeline: Timeline) {
        self.data = data
        self.format = format
        self.sourceIdentity = sourceIdentity
        self.size = size
        self.timeline = timeline
        self.digest = String(Digest.sha256Hex(Array(sourceIdentity.canonical.utf8) + [0] + data).prefix(32))
    }

    /// A document about the source (`ImagePipeline.writeDocument`); its digest is taken as an image's.
    public init(data: [UInt8], document: DocumentKind, sourceFormat: ImageFormat, sourceIdentity: SourceIdentity, timeline: Timeline) {
        self.init(data: data, format: sourceFormat, sourceIdentity: sourceIdentity, size: PixelSize(width: 0, height: 0), timeline: timeline)
        self.document = document
    }
}
