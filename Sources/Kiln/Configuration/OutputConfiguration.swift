import KilnCore

/// `[output]`: encoder defaults when the URL does not say.
public struct OutputConfiguration: Sendable, Equatable {
    /// `jpeg_quality`: 1...100. Default 80.
    public var jpegQuality = 80
    /// `webp_quality`: 1...100. Default 80.
    public var webpQuality = 80
    /// `webp_method`: libwebp effort 0 (fast) ... 6 (small). Default 2: a third of method 4's
    /// time for a few percent more bytes (see NOTES).
    public var webpMethod = 2
    /// `png_compression_level`: zlib level 0...9. Default 6.
    public var pngCompressionLevel = 6
    /// `progressive`: progressive JPEG and interlaced PNG unless the URL says `progressive:0`.
    /// Default false (baseline JPEG encodes faster; progressive is usually a little smaller).
    public var progressive = false
    /// `background`: RGB hex that transparent pixels are flattened onto for JPEG. Default `ffffff`.
    public var background: [UInt8] = [255, 255, 255]

    public static let keys: Set<String> = [
        "output.jpeg_quality", "output.webp_quality", "output.webp_method",
        "output.png_compression_level", "output.background", "output.progressive",
    ]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        jpegQuality = try v.int("output.jpeg_quality", default: jpegQuality, in: 1...100)
        webpQuality = try v.int("output.webp_quality", default: webpQuality, in: 1...100)
        webpMethod = try v.int("output.webp_method", default: webpMethod, in: 0...6)
        pngCompressionLevel = try v.int("output.png_compression_level", default: pngCompressionLevel, in: 0...9)
        progressive = try v.bool("output.progressive", default: progressive)
        if let hex = v.string("output.background") {
            guard let rgb = OutputConfiguration.parseHex(hex) else {
                throw .invalid(key: "output.background", value: hex, expected: "an RGB hex colour such as ffffff", origin: v.origins["output.background"] ?? "")
            }
            background = rgb
        }
    }

    /// `ff8800` or `#ff8800` to bytes.
    public static func parseHex(_ text: String) -> [UInt8]? {
        RGBColor(hex: text)?.bytes
    }

    /// Encoder options for a format and the URL's output options. No ICC profile, by design: the
    /// pipeline converts every profiled source to sRGB (`ColorConverting`), which is what browsers
    /// assume for untagged output. `metadata`: EXIF/XMP to keep (`strip:0`), nil strips them.
    public func encodeOptions(format: ImageFormat, request: OutputOptions = OutputOptions(),
                              metadata: ImageMetadata? = nil) -> EncodeOptions {
        let q = request.quality ?? (format == .webp ? webpQuality : jpegQuality)
        return EncodeOptions(format: format, quality: q, progressive: request.progressive ?? progressive,
                             lossless: request.lossless, webpMethod: webpMethod, pngCompressionLevel: pngCompressionLevel,
                             metadata: request.strip ? nil : metadata)
    }
}
