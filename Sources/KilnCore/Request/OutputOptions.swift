/// The requested output format: a concrete format, `auto` (negotiated with `Accept`), or the source's.
public enum FormatChoice: Sendable, Hashable {
    /// Keep the source's format (no `f:` option).
    case source
    /// WebP when the client accepts it, else the source format; answers carry `Vary: Accept`.
    case auto
    case format(ImageFormat)

    public var canonical: String? {
        switch self {
        case .source: nil
        case .auto: "auto"
        case .format(let f): f.rawValue
        }
    }
}

/// Options for the encoder, from the URL.
public struct OutputOptions: Sendable, Hashable {
    public var format: FormatChoice = .source
    /// 1...100; nil uses the configured default of the output format.
    public var quality: Int?

    public init(format: FormatChoice = .source, quality: Int? = nil) {
        self.format = format
        self.quality = quality
    }

    /// The concrete output format for a source format and the request's `Accept` header.
    public func resolvedFormat(source: ImageFormat, accept: String?) -> ImageFormat {
        switch format {
        case .format(let f): return f
        case .source: return source
        case .auto:
            if let accept, AcceptHeader(accept).allows("image/webp") { return .webp }
            return source
        }
    }
}
