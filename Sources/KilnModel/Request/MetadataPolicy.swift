/// What the output keeps of the source's EXIF and XMP (`strip:`, `output.strip`,
/// `output.strip_signed`).
///
/// - `all` (`strip:1`, the default): nothing; the output carries pixels (and, for JPEG, the
///   orientation already applied).
/// - `keep_copyright` (`strip:copyright`): EXIF's Copyright and Artist, and XMP's rights and
///   creator (`dc:rights`, `dc:creator`, `xmpRights:*`), in a metadata block of their own
///   (`ImageMetadata.copyrightOnly`); nothing else, no position, no camera, no thumbnail.
///   Cloudflare Images keeps this much by default.
/// - `none` (`strip:0`): the EXIF and XMP as they were (orientation reset to 1), but never the GPS
///   position unless `output.info_gps` allows it.
///
/// The colour profile is not metadata here: colour is converted to sRGB, or kept (`icc:keep`).
public enum MetadataPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case all
    case keepCopyright = "keep_copyright"
    case none

    /// `all`/`1`/`true`, `keep_copyright`/`copyright`, `none`/`0`/`false`; nil for anything else.
    public init?(spelling: String) {
        switch spelling.lowercased() {
        case "all", "1", "true": self = .all
        case "keep_copyright", "copyright": self = .keepCopyright
        case "none", "0", "false": self = .none
        default: return nil
        }
    }

    /// The canonical URL spelling: `strip:1`, `strip:copyright`, `strip:0`.
    public var urlValue: String {
        switch self {
        case .all: "1"
        case .keepCopyright: "copyright"
        case .none: "0"
        }
    }

    public var description: String { rawValue }
}
