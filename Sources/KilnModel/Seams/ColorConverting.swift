/// Converts pixels described by an embedded ICC profile to sRGB.
///
/// Kiln's colour policy: every source with an embedded ICC profile is converted to sRGB right
/// after decoding, and every output is written without a profile. sRGB is what browsers assume
/// for untagged images, so the output looks the same everywhere (imgproxy does the same); a CMYK
/// profile could not be carried into RGB output anyway, and a few hundred bytes of profile per
/// thumbnail are saved. Profiles that already describe sRGB are recognised and skipped.
///
/// The default is `SRGBConverter` (liblcms2) in `KilnCodecs`.
public protocol ColorConverting {
    /// `image` (RGB or RGBA, unpremultiplied, alpha kept as is) converted from `profile` to sRGB.
    /// Returns `image` unchanged when the profile already is sRGB, is corrupt, or cannot describe
    /// RGB pixels (a CMYK profile: the JPEG decoder converts CMYK through it itself). Never fails:
    /// an unusable profile is treated as sRGB.
    func convertToSRGB(_ image: PixelBuffer, profile: [UInt8]) -> PixelBuffer
}
