/// What the bytes are, by content (never by file name).
public struct SniffResult: Sendable, Equatable {
    /// The MIME type reported for the bytes, e.g. `image/jpeg`, `text/plain`.
    public var mimeType: String
    /// The format Kiln handles, nil for anything else.
    public var format: ImageFormat? { ImageFormat(mimeType: mimeType) }

    public init(mimeType: String) { self.mimeType = mimeType }
}

/// Identifies bytes by content. The default is `MagicSniffer` (libmagic) in `KilnCodecs`.
public protocol TypeSniffing {
    func sniff(_ data: [UInt8]) -> SniffResult
}
