/// Encoder settings resolved from the URL and the configuration.
public struct EncodeOptions: Sendable, Equatable {
    public var format: ImageFormat
    /// 1...100 (JPEG, lossy WebP).
    public var quality: Int
    /// Progressive JPEG / interlaced PNG.
    public var progressive: Bool
    /// JPEG chroma subsampling (other formats: 4:2:0, unused).
    public var chromaSubsampling: ChromaSubsampling
    /// Lossless WebP.
    public var lossless: Bool
    /// libwebp method 0 (fast) ... 6 (small).
    public var webpMethod: Int
    /// AVIF encoder speed 0 (slowest, smallest) ... 10 (fastest).
    public var avifSpeed: Int
    /// Deflate level 0...9 for PNG (libdeflate; zlib for interlaced output).
    public var pngCompressionLevel: Int
    /// ICC profile to embed, if any. The pipeline passes none: it converts to sRGB (`ColorConverting`).
    public var iccProfile: [UInt8]?
    /// EXIF and XMP to write (`strip:0`); nil strips everything.
    public var metadata: ImageMetadata?

    public init(format: ImageFormat, quality: Int = 80, progressive: Bool = false, lossless: Bool = false,
                webpMethod: Int = 2, avifSpeed: Int = 9, pngCompressionLevel: Int = 6, iccProfile: [UInt8]? = nil,
                metadata: ImageMetadata? = nil, chromaSubsampling: ChromaSubsampling = .s420) {
        self.format = format
        self.quality = quality
        self.progressive = progressive
        self.chromaSubsampling = chromaSubsampling
        self.lossless = lossless
        self.webpMethod = webpMethod
        self.avifSpeed = avifSpeed
        self.pngCompressionLevel = pngCompressionLevel
        self.iccProfile = iccProfile
        self.metadata = metadata
    }

    /// Every setting that changes the encoded bytes, in a fixed order, e.g.
    /// `jpeg;q=80;pg=0;ll=0;wm=2;as=9;pz=6;icc=0;md=0`: the encoder part of cache keys. `md` says
    /// whether metadata is kept (`strip:0`), `icc` whether a profile is embedded; the bytes of
    /// either come from the source, whose version is in the key already. `cs` (chroma
    /// subsampling) is written only when it is not 4:2:0, so keys made before it existed stay.
    /// A new field must be added here (`EncodeOptionsTests` checks that every field counts).
    public var canonical: String {
        "\(format.rawValue);q=\(quality);pg=\(progressive ? 1 : 0);ll=\(lossless ? 1 : 0);wm=\(webpMethod);as=\(avifSpeed);"
            + "pz=\(pngCompressionLevel);icc=\(iccProfile == nil ? 0 : 1);md=\(metadata == nil ? 0 : 1)"
            + (chromaSubsampling == .s420 ? "" : ";cs=\(chromaSubsampling.rawValue)")
    }
}

/// Why an encoder failed (a bug or resource problem, never the client's fault).
public enum EncodeError: Error, Equatable, Sendable {
    case failed(String)
}

/// Encodes one format. Implementations live in `KilnCodecs`. Input is unpremultiplied RGB or RGBA;
/// an encoder without alpha (JPEG) expects the pipeline to have flattened the image.
public protocol ImageEncoding {
    func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8]
}
