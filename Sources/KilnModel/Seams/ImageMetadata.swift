/// The metadata a source carries besides its pixels and colour profile, kept for `strip:0`.
///
/// Both payloads are stored in the form every container shares, so an encoder can write them
/// into any format without knowing where they came from.
public struct ImageMetadata: Sendable, Equatable {
    /// EXIF as TIFF bytes ("II*\0" or "MM\0*"), without JPEG's "Exif\0\0" identifier: the payload
    /// of a PNG eXIf or WebP EXIF chunk. Decoders rewrite the orientation tag to 1, because the
    /// pipeline applies the rotation to the pixels.
    public var exif: [UInt8]?
    /// An XMP packet (UTF-8 XML), without JPEG's "http://ns.adobe.com/xap/1.0/\0" identifier.
    public var xmp: [UInt8]?

    public init(exif: [UInt8]? = nil, xmp: [UInt8]? = nil) {
        self.exif = exif
        self.xmp = xmp
    }

    /// True when neither payload is present.
    public var isEmpty: Bool { exif == nil && xmp == nil }

    /// nil for an empty value, so "no metadata" has one spelling.
    public var nonEmpty: ImageMetadata? { isEmpty ? nil : self }
}
