import KilnModel

/// Failures of the pipeline itself; stage errors (`LoadError`, `DecodeError`, `ProcessingError`,
/// `EncodeError`) pass through unchanged so each keeps its meaning.
public enum PipelineError: Error, Equatable, Sendable {
    /// The bytes are not JPEG, PNG or WebP, whatever the file name says. Carries libmagic's MIME type.
    case unsupportedType(String)
    /// The result (planned from the header, or rendered) is wider or taller than the output
    /// format can store (WebP 16383 px, JPEG 65535 px): refused before the encoder sees it.
    case formatLimit(ImageFormat, PixelSize)
    /// `frame:<n>` asks for a frame the animation does not have (it has `count`).
    case frameOutOfRange(requested: Int, count: Int)
    /// `page:<n>` asks for an image the file does not hold (it holds `count`).
    case pageOutOfRange(requested: Int, count: Int)
    /// `max_bytes:` on an animated output: the quality search encodes still images only.
    case byteBudgetAnimation
}
