import KilnCore

/// `[limits]`: what a request may cost. Checked before any pixel is allocated.
public struct LimitsConfiguration: Sendable, Equatable {
    /// `max_pixels`: largest source in pixels (width × height). Default 50 000 000 (imgproxy's default).
    public var maxPixels = 50_000_000
    /// `max_animation_pixels`: largest canvas × frame count of an animated source. Default 50 000 000.
    public var maxAnimationPixels = 50_000_000
    /// `max_file_bytes`: largest source file. Default 100MB.
    public var maxFileBytes = 100 << 20
    /// `max_output_pixels`: largest result of any processor. Default 50 000 000.
    public var maxOutputPixels = 50_000_000
    /// `max_dimension`: largest width or height a URL may ask for. Default 16384.
    public var maxDimension = 16_384
    /// `max_operations`: most processing steps in one URL, after presets are expanded. Default 16.
    public var maxOperations = 16
    /// `max_blur_sigma`: largest `blur` / `sharpen` sigma. Default 50 (a blur costs the same
    /// for every sigma; the limit keeps results meaningful and the kernel small).
    public var maxBlurSigma = 50

    public static let keys: Set<String> = [
        "limits.max_pixels", "limits.max_animation_pixels", "limits.max_file_bytes",
        "limits.max_output_pixels", "limits.max_dimension", "limits.max_operations", "limits.max_blur_sigma",
    ]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        maxPixels = try v.int("limits.max_pixels", default: maxPixels, in: 1...1_000_000_000)
        maxAnimationPixels = try v.int("limits.max_animation_pixels", default: maxAnimationPixels, in: 1...10_000_000_000)
        maxFileBytes = try v.bytes("limits.max_file_bytes", default: maxFileBytes, in: 1...(4 << 30))
        maxOutputPixels = try v.int("limits.max_output_pixels", default: maxOutputPixels, in: 1...1_000_000_000)
        maxDimension = try v.int("limits.max_dimension", default: maxDimension, in: 1...65_535)
        maxOperations = try v.int("limits.max_operations", default: maxOperations, in: 1...100)
        maxBlurSigma = try v.int("limits.max_blur_sigma", default: maxBlurSigma, in: 1...1000)
    }

    public var decodeLimits: DecodeLimits {
        DecodeLimits(maxPixels: maxPixels, maxAnimationPixels: maxAnimationPixels)
    }
}
