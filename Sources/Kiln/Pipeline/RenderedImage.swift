import KilnCore

/// The result of one render: encoded bytes and what the HTTP answer needs.
public struct RenderedImage: Sendable {
    public var data: [UInt8]
    public var format: ImageFormat
    /// The source version it was made from (for `Last-Modified` and cache keys).
    public var sourceIdentity: SourceIdentity
    /// Strong validator: SHA-256 of the source version and the bytes, quoted, truncated to 128
    /// bits. The source version is in it so that a touched or replaced source gives a new ETag
    /// even when the output happens to come out byte for byte the same.
    public var etag: String
    /// Size of the output in pixels.
    public var size: PixelSize
    public var timeline: Timeline

    public init(data: [UInt8], format: ImageFormat, sourceIdentity: SourceIdentity, size: PixelSize, timeline: Timeline) {
        self.data = data
        self.format = format
        self.sourceIdentity = sourceIdentity
        self.size = size
        self.timeline = timeline
        self.etag = "\"" + Digest.sha256Hex(Array(sourceIdentity.canonical.utf8) + [0] + data).prefix(32) + "\""
    }
}
