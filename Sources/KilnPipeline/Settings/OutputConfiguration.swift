import KilnModel

/// `[output]`: encoder defaults when the URL does not say.
public struct OutputConfiguration: ConfigSection, Equatable {
    public var jpegQuality = Key.jpegQuality.defaultValue
    public var webpQuality = Key.webpQuality.defaultValue
    /// libwebp effort 0 (fast) ... 6 (small). Default 2: a third of method 4's time for a few
    /// percent more bytes (see NOTES).
    public var webpMethod = Key.webpMethod.defaultValue
    public var pngCompressionLevel = Key.pngCompressionLevel.defaultValue
    /// AVIF quality 1...100 (mapped to an AV1 quantizer, `AVIFEncoder.quantizer(quality:)`). Default
    /// 65: on the bench photos the SSIM of WebP at its default 80 (docs/url-api.md, Formats).
    public var avifQuality = Key.avifQuality.defaultValue
    /// libaom speed 0 (slow, small) ... 10 (fast). Default 9 (10 gives the same bytes with libaom 3.6).
    public var avifSpeed = Key.avifSpeed.defaultValue
    /// Progressive JPEG and interlaced PNG unless the URL says `progressive:0` (baseline JPEG
    /// encodes faster; progressive is usually a little smaller).
    public var progressive = Key.progressive.defaultValue
    /// JPEG chroma subsampling unless the URL says `subsampling:`.
    public var jpegSubsampling = Key.jpegSubsampling.defaultValue
    /// RGB that transparent pixels are flattened onto for JPEG.
    public var background: RGBColor = Key.background.defaultValue
    /// `f:json` reports the EXIF GPS position (off: for privacy, a photo's position is left out).
    public var infoGPS = Key.infoGPS.defaultValue
    /// What outputs keep of the source's metadata when the URL has no `strip:`.
    public var strip = Key.strip.defaultValue
    /// The same for signed URLs and nginx's trusted rewrites (`ImageHandler` resolves it).
    public var stripSigned = Key.stripSigned.defaultValue
    /// Whether a source's RGB colour profile is kept when the URL has no `icc:`.
    public var colourProfile = Key.colourProfile.defaultValue

    public enum Key {
        public static let jpegQuality = Setting.count("output.jpeg_quality", default: 80, in: 1...100,
                                                      doc: "JPEG quality when the URL has no `q:`")
        public static let webpQuality = Setting.count("output.webp_quality", default: 80, in: 1...100,
                                                      doc: "WebP quality when the URL has no `q:`")
        public static let webpMethod = Setting.count("output.webp_method", default: 2, in: 0...6,
                                                     doc: "libwebp effort 0 (fast) … 6 (small)")
        public static let pngCompressionLevel = Setting.count("output.png_compression_level", default: 6, in: 0...9,
                                                              doc: "deflate level of PNG output (libdeflate; zlib for interlaced output)")
        public static let avifQuality = Setting.count("output.avif_quality", default: 65, in: 1...100,
                                                      doc: "AVIF quality when the URL has no `q:` (65: about WebP 80's SSIM)")
        public static let avifSpeed = Setting.count("output.avif_speed", default: 9, in: 0...10,
                                                    doc: "AVIF (libaom) speed 0 (slow, small) … 10 (fast); 9 costs about 1.1–1.3× WebP's CPU, 8 about 2.5×, 6 about 8×")
        public static let background = Setting<RGBColor>.custom(
            "output.background", default: .white, type: "RGB hex", expected: "an RGB hex colour such as ffffff",
            doc: "colour transparent pixels are flattened onto for JPEG (the URL's `bg:` wins)",
            parse: { RGBColor(hex: $0) }, format: { $0.description })
        public static let progressive = Setting.bool("output.progressive", default: false,
                                                     doc: "progressive JPEG / interlaced PNG unless the URL says `pg:`")
        public static let jpegSubsampling = Setting<ChromaSubsampling>.custom(
            "output.jpeg_subsampling", default: .s420, type: "subsampling", expected: "4:4:4, 4:2:2 or 4:2:0",
            doc: "JPEG chroma subsampling unless the URL says `ss:`: 4:2:0 the smallest files, 4:4:4 colour at full resolution (sharp coloured text; about 10 % larger files, 1.3× the encode time)",
            parse: { ChromaSubsampling(spelling: $0) }, format: { $0.description })
        public static let strip = Setting<MetadataPolicy>.custom(
            "output.strip", default: .all, type: "metadata policy", expected: "all, keep_copyright or none",
            doc: "what outputs keep of the source's EXIF and XMP when the URL has no `strip:`: `all` strips everything, `keep_copyright` keeps the Copyright and Artist tags and XMP's rights and creator, `none` keeps all but the GPS position (see `output.info_gps`)",
            parse: { MetadataPolicy(spelling: $0) }, format: { $0.rawValue })
        public static let stripSigned = Setting<MetadataPolicy>.custom(
            "output.strip_signed", default: .all, type: "metadata policy", expected: "all, keep_copyright or none",
            doc: "`output.strip` for signed URLs and nginx's trusted rewrites (URLs only the operator writes); `keep_copyright` is Cloudflare's default",
            parse: { MetadataPolicy(spelling: $0) }, format: { $0.rawValue })
        public static let colourProfile = Setting<ColourProfilePolicy>.custom(
            "output.colour_profile", default: .srgb, type: "colour policy", expected: "srgb or keep",
            doc: "`srgb`: every profiled source is converted to sRGB and written untagged (what browsers assume); `keep`: a source's RGB profile (Display P3, Adobe RGB) and its values are kept and written into the output, for wide-gamut screens; the URL's `icc:` wins",
            parse: { ColourProfilePolicy(rawValue: $0) }, format: { $0.rawValue })
        public static let infoGPS = Setting.bool("output.info_gps", default: false,
                                                 doc: "`f:json` reports the EXIF GPS position (latitude, longitude, altitude), and `strip:0` keeps it in the "
                                                     + "output's EXIF and XMP; off by default, for privacy (copyright and the rest of the metadata stay)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.jpegQuality) { $0.jpegQuality = $1 },
        ConfigField(Key.webpQuality) { $0.webpQuality = $1 },
        ConfigField(Key.webpMethod) { $0.webpMethod = $1 },
        ConfigField(Key.pngCompressionLevel) { $0.pngCompressionLevel = $1 },
        ConfigField(Key.avifQuality) { $0.avifQuality = $1 },
        ConfigField(Key.avifSpeed) { $0.avifSpeed = $1 },
        ConfigField(Key.background) { $0.background = $1 },
        ConfigField(Key.progressive) { $0.progressive = $1 },
        ConfigField(Key.jpegSubsampling) { $0.jpegSubsampling = $1 },
        ConfigField(Key.infoGPS) { $0.infoGPS = $1 },
        ConfigField(Key.strip) { $0.strip = $1 },
        ConfigField(Key.stripSigned) { $0.stripSigned = $1 },
        ConfigField(Key.colourProfile) { $0.colourProfile = $1 },
    ]

    public init() {}

    /// Whether a still's RGB colour profile is kept rather than converted to sRGB (`icc:`, else
    /// `output.colour_profile`).
    /// Not for a format that cannot carry the profile (`f:gif`): its pixels are converted.
    public func keepsProfile(for request: OutputOptions) -> Bool {
        if case .format(let format) = request.format, !format.carriesColourProfile { return false }
        return (request.colourProfile ?? colourProfile) == .keep
    }

    /// What a URL without `strip:` keeps: `strip_signed` for URLs only the operator writes (signed,
    /// trusted rewrites), else `strip`.
    public func defaultStrip(operatorURL: Bool) -> MetadataPolicy {
        operatorURL ? stripSigned : strip
    }

    /// Encoder options for a format and the URL's output options. No ICC profile, by design: the
    /// pipeline converts every profiled source to sRGB (`ColorConverting`), which is what browsers
    /// assume for untagged output. `metadata`: the source's EXIF/XMP, of which the URL's `strip:`
    /// (else `output.strip`) keeps nothing, the copyright (`ImageMetadata.copyrightOnly`) or all
    /// of it but the GPS position unless `info_gps` allows it (`ImageMetadata.withoutGPS`).
    /// `iccProfile`: the source's profile when it is kept (`icc:keep`, `keepsProfile(for:)`).
    public func encodeOptions(format: ImageFormat, request: OutputOptions = OutputOptions(),
                              metadata: ImageMetadata? = nil, iccProfile: [UInt8]? = nil) -> EncodeOptions {
        let kept: ImageMetadata? = switch request.strip ?? strip {
        case .all: nil
        case .keepCopyright: metadata?.copyrightOnly
        case .none: infoGPS ? metadata : metadata?.withoutGPS
        }
        let q = request.quality ?? request.formatQualities[format] ?? (format == .webp ? webpQuality : format == .avif ? avifQuality : jpegQuality)
        return EncodeOptions(format: format, quality: q, progressive: request.progressive ?? progressive,
                             lossless: request.lossless, webpMethod: webpMethod, avifSpeed: avifSpeed, pngCompressionLevel: pngCompressionLevel,
                             iccProfile: iccProfile, metadata: kept,
                             chromaSubsampling: format == .jpeg ? request.subsampling ?? jpegSubsampling : .s420)
    }
}
