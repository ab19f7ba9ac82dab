import KilnModel

/// Converts pixels from their embedded ICC profile to sRGB with liblcms2 (`ColorConverting`).
///
/// Kiln's colour decision: every source with an embedded profile is converted to sRGB right after
/// decoding and every output goes out without a profile. Browsers assume sRGB for untagged images,
/// so an Adobe RGB, Display P3 or CMYK source looks the same after processing; a CMYK profile
/// could not describe RGB output anyway; imgproxy does the same.
///
/// - Skip: a profile that already is sRGB (primaries and tone curves compared with lcms2's sRGB,
///   `ColorProfile.isSRGB`) leaves the pixels untouched, byte for byte.
/// - Unusable profiles (garbage, truncated, a CMYK profile on RGB pixels, Lab, device links) are
///   treated as sRGB: the pixels come back unchanged and nothing is reported. Decoding never
///   fails because of a profile.
/// - RGB and RGBA (alpha copied unchanged) through an RGB profile; grey sources (expanded to RGB
///   by the decoders) through a grey profile's tone curve; CMYK JPEGs through their CMYK profile
///   (`JPEGDecoder` calls `convertCMYK`).
/// - Cost: a transform is built once per profile and pixel layout and kept in a process-wide
///   LRU of `cacheCapacity` entries (`ColorConversionCache`), keyed by the SHA-256 of the profile.
///   Measured (release, through the server's `colour` timing, loaded 2-core machine): Adobe RGB
///   640×427 rocket 11.6 ms on a worker's first request (about 6 ms to build the transform),
///   5.7 ms after; the 600×400 CMYK JPEG with a 557 KB profile decodes in 58-72 ms first (the LUT
///   transform takes about 49 ms to build), 16-23 ms after. An sRGB profile costs 0.01 ms once
///   its verdict is cached. Pillow's ImageCms (same lcms2) takes as long.
public final class SRGBConverter: ColorConverting, @unchecked Sendable {
    /// The process-wide converter (and cache) the standard pipeline and `JPEGDecoder` use.
    public static let shared = SRGBConverter()

    /// Transforms kept per process. Each is a few hundred KB at most (lcms2's optimised tables).
    public static let defaultCacheCapacity = 8

    let cache: ColorConversionCache

    public init(cacheCapacity: Int = SRGBConverter.defaultCacheCapacity) {
        cache = ColorConversionCache(capacity: cacheCapacity)
    }

    public func convertToSRGB(_ image: PixelBuffer, profile: [UInt8]) -> PixelBuffer {
        // Only RGB and grey profiles describe RGB(A) pixels: anything else (a CMYK JPEG's profile,
        // already applied by the decoder) is let through without hashing a possibly large profile.
        guard ICCProfile.isRGB(profile) || ICCProfile.hasDataColourSpace(profile, "GRAY") else { return image }
        let layout: ColorLayout = image.channels == 4 ? .rgba : .rgb
        var result = image
        switch conversion(for: profile, layout: layout) {
        case .identity:
            return image
        case .transform(let transform):
            result.pixels = transform.apply(image.pixels)
        case .grayTable(let table):
            result.pixels = table.apply(image.pixels, channels: image.channels)
        }
        return result
    }

    /// CMYK pixels (4 bytes each, `inverted` when 255 means no ink) converted to sRGB RGB through
    /// a CMYK `profile`; nil when the profile is not a usable CMYK profile (the caller then falls
    /// back to the naive formula, `CMYKConversion`).
    package func convertCMYK(_ cmyk: [UInt8], inverted: Bool, profile: [UInt8]) -> [UInt8]? {
        guard case .transform(let transform) = conversion(for: profile, layout: .cmyk(inverted: inverted)) else {
            return nil
        }
        return transform.apply(cmyk)
    }

    /// True when `profile` would leave RGB pixels unchanged (sRGB or unusable). Builds and caches
    /// the conversion like a real call.
    public func isIdentity(_ profile: [UInt8]) -> Bool {
        if case .identity = conversion(for: profile, layout: .rgb) { return true }
        return false
    }

    // MARK: - Implementation

    func conversion(for profile: [UInt8], layout: ColorLayout) -> ColorConversion {
        let key = ColorConversionCache.Key(digest: Digest.sha256Hex(profile), layout: layout)
        if let cached = cache.value(for: key) { return cached }
        let made = Self.makeConversion(profile, layout: layout)
        cache.insert(made, for: key)
        return made
    }

    /// Opens the profile and builds what `layout` needs. Never throws: anything unusable is `.identity`.
    static func makeConversion(_ bytes: [UInt8], layout: ColorLayout) -> ColorConversion {
        guard let profile = ColorProfile(bytes), let sRGB = ColorProfile.makeSRGB() else { return .identity }
        switch (profile.space, layout) {
        case (.cmyk, .cmyk):
            return ColorTransform(from: profile, to: sRGB, layout: layout).map { .transform($0) } ?? .identity
        case (.rgb, .rgb), (.rgb, .rgba):
            if profile.isSRGB { return .identity }
            return ColorTransform(from: profile, to: sRGB, layout: layout).map { .transform($0) } ?? .identity
        case (.gray, .rgb), (.gray, .rgba):
            guard let table = GrayToneTable(from: profile, to: sRGB), !table.isIdentity else { return .identity }
            return .grayTable(table)
        default:
            return .identity
        }
    }
}
