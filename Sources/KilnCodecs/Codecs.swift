import KilnCore

/// Looks codecs up by format, for the pipeline's stages (`PipelineStages.decoder` / `.encoder`).
///
/// The codecs are stateless values (each call makes and frees its own library handles), so a
/// lookup costs nothing and the results may be kept or shared.
public enum Codecs {
    /// The decoder for `format`: `JPEGDecoder`, `PNGDecoder` or `WebPDecoder`.
    public static func decoder(for format: ImageFormat) -> any ImageDecoding {
        switch format {
        case .jpeg: JPEGDecoder()
        case .png: PNGDecoder()
        case .webp: WebPDecoder()
        }
    }

    /// The encoder for `format`: `JPEGEncoder`, `PNGEncoder` (UP filter) or `WebPEncoder`.
    public static func encoder(for format: ImageFormat) -> any ImageEncoding {
        switch format {
        case .jpeg: JPEGEncoder()
        case .png: PNGEncoder()
        case .webp: WebPEncoder()
        }
    }
}
