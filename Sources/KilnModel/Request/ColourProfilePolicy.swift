/// What happens to a source's colour profile (`icc:`, `output.colour_profile`).
///
/// - `srgb` (the default): the pixels are converted to sRGB and the output carries no profile,
///   which is what browsers assume of an untagged image: every screen shows the same colours, and
///   a wide-gamut screen shows no more than sRGB's.
/// - `keep`: a source with an RGB ICC profile (Display P3, Adobe RGB, a camera's) keeps its pixel
///   values and its profile, which the output carries (JPEG APP2, PNG iCCP, WebP ICCP, AVIF colr),
///   so a wide-gamut screen shows the colours sRGB cannot hold. Animations, grey and CMYK
///   profiles, and sources described by AVIF or HEIC colour boxes (nclx) are still converted.
///
/// Processing runs on the profile's values: a watermark, a `bg:` or a `pad` colour is written as
/// given (sRGB numbers) into the kept space.
public enum ColourProfilePolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case srgb
    case keep

    public var description: String { rawValue }
}
