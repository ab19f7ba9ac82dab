import KilnCore

/// Failures of the pipeline itself; stage errors (`LoadError`, `DecodeError`, `ProcessingError`,
/// `EncodeError`) pass through unchanged so each keeps its meaning.
public enum PipelineError: Error, Equatable, Sendable {
    /// The bytes are not JPEG, PNG or WebP, whatever the file name says. Carries libmagic's MIME type.
    case unsupportedType(String)
}
