/// The image formats Kiln decodes and encodes.
public enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp
    /// Read and written, still and animated (written only when asked for: `f:gif`).
    case gif
    /// AVIF (AV1 still image): decoded (libavif with dav1d) and encoded (libavif with aom).
    case avif
    /// HEIC/HEIF (HEVC still image): decoded only (libheif with libde265); never an output.
    case heic
    /// SVG: sanitised (`SVGSanitizer`), then rasterised by librsvg at the size the request needs
    /// (`isVector`); input only.
    case svg
    /// TIFF (libtiff): the first page or `page:<n>`; input only.
    case tiff
    /// BMP (Windows bitmap): input only.
    case bmp
    /// ICO (Windows icon): read (the largest entry or `page:<n>`) and written (`f:ico`: one PNG
    /// entry, at most 256 × 256).
    case ico
    /// JPEG XL (libjxl, decode only): input only.
    case jxl

    public var mimeType: String {
        switch self {
        case .jpeg: "image/jpeg"
        case .png: "image/png"
        case .webp: "image/webp"
        case .gif: "image/gif"
        case .avif: "image/avif"
        case .heic: "image/heic"
        case .svg: "image/svg+xml"
        case .tiff: "image/tiff"
        case .bmp: "image/bmp"
        case .ico: "image/vnd.microsoft.icon"
        case .jxl: "image/jxl"
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
        case "image/svg+xml", "image/svg": self = .svg
        case "image/tiff": self = .tiff
        case "image/bmp", "image/x-ms-bmp", "image/x-bmp": self = .bmp
        case "image/vnd.microsoft.icon", "image/x-icon": self = .ico
        case "image/jxl": self = .jxl
        default: return nil
        }
    }

    /// The format a file extension names (`jpg`, `jpeg`, `png`, `webp`, `avif`, `heic`, `svg`, `tif`, ...), for `kiln process`.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "jpg", "jpeg": self = .jpeg
        case "png": self = .png
        case "webp": self = .webp
        case "gif": self = .gif
        case "avif": self = .avif
        case "heic", "heif": self = .heic
        case "svg": self = .svg
        case "tif", "tiff": self = .tiff
        case "bmp": self = .bmp
        case "ico": self = .ico
        case "jxl": self = .jxl
        default: return nil
        }
    }

    /// Whether the encoded format can carry an alpha channel.
    public var supportsAlpha: Bool { self != .jpeg }

    /// Whether Kiln writes this format (`f:`): HEIC, SVG, TIFF, BMP and JPEG XL are read only.
    public var isEncodable: Bool {
        switch self {
        case .jpeg, .png, .webp, .avif, .gif, .ico: true
        case .heic, .svg, .tiff, .bmp, .jxl: false
        }
    }

    /// Whether a format may be chosen without `f:` naming it (the source's format, `f:auto`):
    /// never GIF (256 colours, larger than WebP or AVIF) nor ICO (256 px): each only when asked for.
    public var isNegotiable: Bool { self != .gif && self != .ico && isEncodable }

    /// Whether the source is drawn rather than stored as pixels (SVG): it is rasterised at the
    /// size the request's leading resize asks for, enlargement included (`VectorRaster`).
    public var isVector: Bool { self == .svg }

    /// Whether the file may hold several images of which `page:<n>` picks one (TIFF pages, ICO entries).
    public var hasPages: Bool { self == .tiff || self == .ico }

    /// Whether Kiln writes an ICC profile into this format (`icc:keep`): every written format but
    /// GIF (ICO through its PNG entry).
    public var carriesColourProfile: Bool { isEncodable && self != .gif }

    /// Whether Kiln writes animations in this format (animated WebP, GIF and AVIF sequences).
    public var supportsAnimation: Bool { self == .webp || self == .gif || self == .avif }

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
        case .svg: 16_384    // the largest raster (librsvg's cairo surfaces stop at 32767)
        case .tiff: 4_294_967_295
        case .bmp: 2_147_483_647
        case .ico: 256
        case .jxl: 1_073_741_823
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
        case .svg: "SVG"
        case .tiff: "TIFF"
        case .bmp: "BMP"
        case .ico: "ICO"
        case .jxl: "JPEG XL"
        }
    }
}
