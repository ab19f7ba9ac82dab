import KilnCore

/// `[limits]`: what a request may cost. Checked before any pixel is allocated.
public struct LimitsConfiguration: ConfigSection, Equatable {
    /// Largest source in pixels (width × height).
    public var maxPixels = Key.maxPixels.defaultValue
    /// Largest canvas × frame count of an animated source.
    public var maxAnimationPixels = Key.maxAnimationPixels.defaultValue
    /// Largest source file in bytes.
    public var maxFileBytes = Key.maxFileBytes.defaultValue
    /// Largest result of any processor.
    public var maxOutputPixels = Key.maxOutputPixels.defaultValue
    /// Largest width or height a URL may ask for.
    public var maxDimension = Key.maxDimension.defaultValue
    /// Most processing steps in one URL, after presets are expanded.
    public var maxOperations = Key.maxOperations.defaultValue
    /// Largest `blur` / `sharpen` sigma (a blur costs the same for every sigma; the limit keeps
    /// results meaningful and the kernel small).
    public var maxBlurSigma = Key.maxBlurSigma.defaultValue
    /// Longest request path in bytes (400 above it).
    public var maxPathBytes = Key.maxPathBytes.defaultValue
    /// Most option segments in one URL, before presets are expanded (400 above it).
    public var maxOptions = Key.maxOptions.defaultValue

    /// The `[limits]` keys: the one place their names, types, defaults and ranges are written.
    public enum Key {
        public static let maxPixels = Setting.count("limits.max_pixels", default: 50_000_000, in: 1...1_000_000_000,
                                                    doc: "largest source, width × height (imgproxy's default)")
        public static let maxAnimationPixels = Setting.count("limits.max_animation_pixels", default: 50_000_000, in: 1...10_000_000_000,
                                                             doc: "largest canvas × frame count of an animated source")
        public static let maxFileBytes = Setting.size("limits.max_file_bytes", default: 100 << 20, in: 1...(4 << 30),
                                                      doc: "largest source file")
        public static let maxOutputPixels = Setting.count("limits.max_output_pixels", default: 50_000_000, in: 1...1_000_000_000,
                                                          doc: "largest result")
        public static let maxDimension = Setting.count("limits.max_dimension", default: 16_384, in: 1...65_535,
                                                       doc: "largest width or height a URL may ask for (after `dpr`)")
        public static let maxOperations = Setting.count("limits.max_operations", default: 16, in: 1...100,
                                                        doc: "most processors in one URL, presets expanded")
        public static let maxBlurSigma = Setting.count("limits.max_blur_sigma", default: 50, in: 1...1000,
                                                       doc: "largest `blur` / `sharpen` sigma")
        public static let maxPathBytes = Setting.size("limits.max_path_bytes", default: 8 << 10, in: 256...(1 << 20),
                                                      doc: "longest request path, query string included (400 above it)")
        public static let maxOptions = Setting.count("limits.max_options", default: 64, in: 1...1000,
                                                     doc: "most option segments in one URL, presets not expanded (400 above it)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.maxPixels) { $0.maxPixels = $1 },
        ConfigField(Key.maxAnimationPixels) { $0.maxAnimationPixels = $1 },
        ConfigField(Key.maxFileBytes) { $0.maxFileBytes = $1 },
        ConfigField(Key.maxOutputPixels) { $0.maxOutputPixels = $1 },
        ConfigField(Key.maxDimension) { $0.maxDimension = $1 },
        ConfigField(Key.maxOperations) { $0.maxOperations = $1 },
        ConfigField(Key.maxBlurSigma) { $0.maxBlurSigma = $1 },
        ConfigField(Key.maxPathBytes) { $0.maxPathBytes = $1 },
        ConfigField(Key.maxOptions) { $0.maxOptions = $1 },
    ]

    public init() {}

    public var decodeLimits: DecodeLimits {
        DecodeLimits(maxPixels: maxPixels, maxAnimationPixels: maxAnimationPixels)
    }
}
