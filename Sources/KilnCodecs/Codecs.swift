import KilnCore

/// Looks codecs up by format, for the pipeline's stages (`PipelineStages.decoder` / `.encoder`).
///
/// The codecs are stateless values (each call makes and frees its own library handles), so a
/// lookup costs nothing and the results may be kept or shared.
public enum Codecs {
    /// The decoder for `format`: `JPEGDecoder`, `PNGDecoder`, `WebPDecoder`, `AVIFDecoder` or `HEIFDecoder`.
    public static func decoder(for format: ImageFormat) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder()
        case .png: PNGDecoder()
        case .webp: WebPDecoder()
        case .avif: AVIFDecoder()
        case .heic: HEIFDecoder()
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
        case .heic: HEICUnsupportedEncoder()
        }
    }
}
