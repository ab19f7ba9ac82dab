/// Why a URL could not be turned into an `ImageRequest`.
public enum SpecError: Error, Equatable, Sendable {
    /// A known option with a bad argument; names the segment.
    case invalidOption(segment: String, reason: String)
    /// `name:args` whose name is no option; names the segment.
    case unknownOption(segment: String)
    /// Nothing after the options.
    case missingSourcePath
    /// A path that would leave the root (`..`, encoded dots, NUL, absolute, encoded slash).
    case forbiddenPath(reason: String)
    /// Bytes that are not valid percent-encoding or UTF-8.
    case malformedPath(reason: String)

    /// A path whose bytes, percent-decoded, are not UTF-8 (400): never read with U+FFFD in their
    /// place, which two different paths would share (one file, one cache key).
    public static let notUTF8 = SpecError.malformedPath(reason: "the path is not valid UTF-8 (after percent-decoding)")
}
