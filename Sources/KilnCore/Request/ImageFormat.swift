/// The image formats Kiln decodes and encodes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        }
    }

    /// The format for a MIME type as libmagic reports it, nil for anything Kiln does not handle.
    public init?(mimeType: String) {
        switch mimeType {
        case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
        case "image/png", "image/apng": self = .png
        case "image/webp": self = .webp
        default: return nil
        }
    }

    /// The format a file extension names (`jpg`, `jpeg`, `png`, `webp`), for `kiln process`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        default: return nil
        }
    }

    /// Whether the encoded format can carry an alpha channel.
    public var supportsAlpha: Bool { self != .jpeg }
}
