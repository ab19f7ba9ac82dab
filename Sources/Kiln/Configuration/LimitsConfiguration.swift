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

    public static let keys: Set<String> = [
        "limits.max_pixels", "limits.max_animation_pixels", "limits.max_file_bytes",
        "limits.max_output_pixels", "limits.max_dimension",
    ]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        maxPixels = try v.int("limits.max_pixels", default: maxPixels, in: 1...1_000_000_000)
        maxAnimationPixels = try v.int("limits.max_animation_pixels", default: maxAnimationPixels, in: 1...10_000_000_000)
        maxFileBytes = try v.bytes("limits.max_file_bytes", default: maxFileBytes, in: 1...(4 << 30))
        maxOutputPixels = try v.int("limits.max_output_pixels", default: maxOutputPixels, in: 1...1_000_000_000)
        maxDimension = try v.int("limits.max_dimension", default: maxDimension, in: 1...65_535)
    }

    public var decodeLimits: DecodeLimits {
        DecodeLimits(maxPixels: maxPixels, maxAnimationPixels: maxAnimationPixels)
    }
}
