/// Answers about an image that are not an image (`f:json`, `f:blurhash`, `f:thumbhash`): a
/// separate output kind beside `FormatChoice`, so `ImageFormat`, `f:auto` and the codecs'
/// `isEncodable` never see them. The HTTP layer maps each to its content type.
public enum DocumentKind: String, Sendable, Hashable, CaseIterable {
    /// A JSON document about the source and the result the other options would produce.
    case json
    /// The BlurHash string of the source (text).
    case blurhash
    /// The ThumbHash of the source, base64 (text).
    case thumbhash

    /// The media type of `f:json` (JSON), `f:blurhash` and `f:thumbhash` (one line of text, no
    /// newline), as `ImageFormat.mimeType` is an image's: the answer's `Content-Type`, and the
    /// shared store's object type.
    public var contentType: String {
        switch self {
        case .json: "application/json"
        case .blurhash, .thumbhash: "text/plain; charset=utf-8"
        }
    }

    /// Whether the answer needs pixels (a small decode): the hashes always, `f:json` with
    /// `placeholders:1`.
    public func needsPixels(placeholders: Bool) -> Bool {
        self != .json || placeholders
    }
}

/// BlurHash's component counts (`blurhash:<x>:<y>`, `bh`), 1...9 each; default 4 × 3.
public struct BlurHashComponents: Sendable, Hashable {
    public var x: Int
    public var y: Int
    public static let standard = BlurHashComponents(x: 4, y: 3)

    public init(x: Int, y: Int) {
        precondition((1...9).contains(x) && (1...9).contains(y), "BlurHash takes 1...9 components per axis")
        self.x = x
        self.y = y
    }
}
