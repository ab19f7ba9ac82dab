import KilnModel

/// Looks codecs up by format, for the pipeline's stages (`PipelineStages.decoder` / `.encoder`).
///
/// The codecs are stateless values (each call makes and frees its own library handles), so a
/// lookup costs nothing and the results may be kept or shared.
public enum Codecs {
    /// The decoder for `format`: `JPEGDecoder`, `PNGDecoder`, `WebPDecoder`, `GIFDecoder`, `AVIFDecoder`,
    /// `HEIFDecoder`, `SVGDecoder`, `TIFFDecoder`, `BMPDecoder`, `ICODecoder` or `JXLDecoder`.
    public static func decoder(for format: ImageFormat) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder()
        case .png: PNGDecoder()
        case .webp: WebPDecoder()
        case .gif: GIFDecoder()
        case .avif: AVIFDecoder()
        case .heic: HEIFDecoder()
        case .svg: SVGDecoder()
        case .tiff: TIFFDecoder()
        case .bmp: BMPDecoder()
        case .ico: ICODecoder()
        case .jxl: JXLDecoder()
        }
    }

    /// The encoder for `format`: `JPEGEncoder`, `PNGEncoder` (UP filter), `WebPEncoder` or `AVIFEncoder`;
    /// HEIC is input only (`ImageFormat.isEncodable`): its encoder refuses every image.
    public static func encoder(for format: ImageFormat) -> any ImageEncoding {
        switch format {
        case .jpeg: JPEGEncoder()
        case .png: PNGEncoder()
        case .webp: WebPEncoder()
        case .avif: AVIFEncoder()
        case .gif: GIFEncoder()
        case .heic: HEICUnsupportedEncoder()
        case .ico: ICOEncoder()
        case .svg, .tiff, .bmp, .jxl: NoEncoder(format: format)
        }
    }

    /// Whether `format` can be written: its encoder exists and its library is installed (libavif
    /// is loaded here on the first call for AVIF).
    public static func canEncode(_ format: ImageFormat) -> Bool {
        switch format {
        case .avif: AVIFLibrary.functions != nil
        default: format.isEncodable
        }
    }

    /// The frame-by-frame decoder of animations: `GIFDecoder`, `WebPAnimationDecoder`; nil for stills-only formats.
    public static func animationDecoder(for format: ImageFormat) -> (any AnimationDecoding)? {
        switch format {
        case .gif: GIFDecoder()
        case .webp: WebPAnimationDecoder()
        case .avif: AVIFAnimationDecoder()
        default: nil
        }
    }

    /// The animation encoder: `WebPAnimationEncoder` for WebP, `GIFEncoder` for GIF; nil for
    /// formats written as stills only.
    public static func animationEncoder(for format: ImageFormat) -> (any AnimationEncoding)? {
        switch format {
        case .webp: WebPAnimationEncoder()
        case .gif: GIFEncoder()
        case .avif: AVIFAnimationEncoder()
        default: nil
        }
    }
}

/// The "encoder" of a read-only format (SVG, TIFF, BMP, JPEG XL): the parser refuses `f:gif` and the pipeline never
/// picks it, so reaching this is a bug, reported as an encoder failure.
struct NoEncoder: ImageEncoding, Sendable {
    let format: ImageFormat
    func encode(_ image: PixelBuffer, options: EncodeOptions) throws(EncodeError) -> [UInt8] {
        throw .failed("Kiln does not write \(format.displayName)")
    }
}
