/// The image formats Kiln decodes and encodes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp
    /// Input only (animated or still): `isEncodable` is false.
    case gif
    /// AVIF (AV1 still image): decoded (libavif with dav1d) and encoded (libavif with aom).
    case avif
    /// HEIC/HEIF (HEVC still image): decoded only (libheif with libde265); never an output.
    case heic

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .avif: "image/avif"
        case .heic: "image/heic"
        }
    }

    /// The format for a MIME type as libmagic reports it, nil for anything Kiln does not handle.
    public init?(mimeType: String) {
        switch mimeType {
        case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
        case "image/png", "image/apng": self = .png
        case "image/webp": self = .webp
        case "image/gif": self = .gif
        case "image/avif", "image/avif-sequence": self = .avif
        case "image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence": self = .heic
        default: return nil
        }
    }

    /// The format a file extension names (`jpg`, `jpeg`, `png`, `webp`, `avif`, `heic`), for `kiln process`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "gif": self = .gif
        case "avif": self = .avif
        case "heic", "heif": self = .heic
        default: return nil
        }
    }

    /// Whether the encoded format can carry an alpha channel.
    public var supportsAlpha: Bool { self != .jpeg }

    /// Whether Kiln writes this format (`f:`): GIF and HEIC are read only.
    public var isEncodable: Bool { self != .gif && self != .heic }

    /// Whether Kiln writes animations in this format (animated WebP).
    public var supportsAnimation: Bool { self == .webp }

    /// Whether a quality changes what this format writes (JPEG, WebP, AVIF; never losslessly):
    /// what `q:`, `max_bytes` and Save-Data can lower.
    public func hasQuality(lossless: Bool) -> Bool {
        !lossless && (self == .jpeg || self == .webp || self == .avif)
    }

    /// The largest width and height the format can store: WebP's 14-bit dimensions (16383),
    /// JPEG's 16-bit ones (65535), PNG's 31-bit ones, AVIF's 16384 (the largest size libavif 0.11
    /// with libaom 3.6 encodes as one AV1 frame here; see `AVIFEncoder`), HEIC's 16384 (input only). Checked before encoding (and before
    /// decoding when the output size is known from the plan), never left to the encoder.
    public var maxDimension: Int {
        switch self {
        case .jpeg: 65_535
        case .png: 2_147_483_647
        case .webp: 16_383
        case .gif: 65_535
        case .avif: 16_384
        case .heic: 16_384
        }
    }

    /// Whether an image of `size` can be stored in this format.
    public func canHold(_ size: PixelSize) -> Bool {
        size.width <= maxDimension && size.height <= maxDimension
    }

    /// The name used in messages: `JPEG`, `PNG`, `WebP`.
    public var displayName: String {
        switch self {
        case .jpeg: "JPEG"
        case .png: "PNG"
        case .webp: "WebP"
        case .gif: "GIF"
        case .avif: "AVIF"
        case .heic: "HEIC"
        }
    }
}
