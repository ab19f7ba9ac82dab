import KilnModel

/// `[limits]`, the pipeline's part: what a request may cost. Checked before any pixel is allocated.
/// The section is split by the code that reads it: `limits.render_timeout`, `slow_log_after` and
/// `max_worker_memory` are enforced by the process layer (KilnServer's `WorkerLimitsConfiguration`).
public struct LimitsConfiguration: ConfigSection, Equatable {
    /// Largest source in pixels (width × height).
    public var maxPixels = Key.maxPixels.defaultValue
    /// Largest canvas × frame count of an animated source.
    public var maxAnimationPixels = Key.maxAnimationPixels.defaultValue
    /// Most frames of an animated source.
    public var maxAnimationFrames = Key.maxAnimationFrames.defaultValue
    /// What an animation over a limit gets: a 413 or its first frame.
    public var animationOverLimit = Key.animationOverLimit.defaultValue
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
    /// Largest planned memory of one request (`RequestCost.peakBytes`; 413 above it).
    public var maxRequestMemory = Key.maxRequestMemory.defaultValue
    /// Most planned work of one request, in megapixel-passes (`RequestCost.work`; 413 above it).
    public var maxRequestWork = Key.maxRequestWork.defaultValue
    /// Largest encoded result in bytes (413 above it).
    public var maxOutputBytes = Key.maxOutputBytes.defaultValue

    /// `limits.animation_over_limit`: what happens to an animation over `max_animation_frames`,
    /// `max_animation_pixels` or the work budget.
    public enum AnimationOverLimit: String, Sendable, Equatable, CaseIterable {
        /// 413 naming the limit.
        case refuse
        /// Only the first frame is rendered (a still result, even for `f:webp`).
        case first_frame
    }

    /// The `[limits]` keys: the one place their names, types, defaults and ranges are written.
    public enum Key {
        public static let maxPixels = Setting.count("limits.max_pixels", default: 50_000_000, in: 1...1_000_000_000,
                                                    doc: "largest source, width × height (imgproxy's default)")
        public static let maxAnimationPixels = Setting.count("limits.max_animation_pixels", default: 50_000_000, in: 1...10_000_000_000,
                                                             doc: "largest canvas × frame count of an animated source")
        public static let maxAnimationFrames = Setting.count("limits.max_animation_frames", default: 100, in: 1...100_000,
                                                             doc: "most frames of an animated source (GIF, WebP), counted from its structure before decoding")
        public static let animationOverLimit = Setting<AnimationOverLimit>.choice(
            "limits.animation_over_limit", default: .refuse,
            doc: "an animation over `max_animation_frames`, `max_animation_pixels` or `max_request_work`: `refuse` (413 naming the "
                + "limit) or `first_frame` (the first frame alone, as a still image)")
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
        public static let maxRequestMemory = Setting.size(
            "limits.max_request_memory", default: 256 << 20, in: (16 << 20)...(1 << 40),
            doc: "most memory one request may need, planned from the source's header before decoding: the largest "
                + "set of buffers alive at once (file bytes, decoded pixels after shrink-on-load, each step's input, "
                + "output and float scratch, the encoder's working set); 413 above it. The default admits a thumbnail "
                + "of a JPEG, PNG or lossy WebP within `limits.max_pixels` (large PNGs are shrunk while decoding); "
                + "GIF, AVIF, HEIC and lossless WebP are decoded whole and fit smaller sizes (operations.md has the "
                + "largest of each)")
        public static let maxRequestWork = Setting.count(
            "limits.max_request_work", default: 3000, in: 1...10_000_000,
            doc: "most CPU work one request may need, planned before decoding, in megapixel-passes (one simple pass "
                + "over a million pixels, about 10 ms on one core; blur costs 5 per megapixel, sharpen 8, PNG encoding 40, "
                + "lossless WebP 150); 413 above it. 3000 is about 30 s of one core: a backstop for chains of heavy steps (the render deadline stops the rest)")
        public static let maxOutputBytes = Setting.size(
            "limits.max_output_bytes", default: 32 << 20, in: 1...(4 << 30),
            doc: "largest encoded result; checked after encoding (and before decoding when a lower bound is known: "
                + "PNG at compression level 0); 413 above it, remembered. 32 MiB holds the 12 MP bench photo as PNG "
                + "(23 MB); a bigger answer is no web image, and it would crowd the caches")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.maxPixels) { $0.maxPixels = $1 },
        ConfigField(Key.maxAnimationPixels) { $0.maxAnimationPixels = $1 },
        ConfigField(Key.maxAnimationFrames) { $0.maxAnimationFrames = $1 },
        ConfigField(Key.animationOverLimit) { $0.animationOverLimit = $1 },
        ConfigField(Key.maxFileBytes) { $0.maxFileBytes = $1 },
        ConfigField(Key.maxOutputPixels) { $0.maxOutputPixels = $1 },
        ConfigField(Key.maxDimension) { $0.maxDimension = $1 },
        ConfigField(Key.maxOperations) { $0.maxOperations = $1 },
        ConfigField(Key.maxBlurSigma) { $0.maxBlurSigma = $1 },
        ConfigField(Key.maxPathBytes) { $0.maxPathBytes = $1 },
        ConfigField(Key.maxOptions) { $0.maxOptions = $1 },
        ConfigField(Key.maxRequestMemory) { $0.maxRequestMemory = $1 },
        ConfigField(Key.maxRequestWork) { $0.maxRequestWork = $1 },
        ConfigField(Key.maxOutputBytes) { $0.maxOutputBytes = $1 },
    ]

    public init() {}

    public var decodeLimits: DecodeLimits {
        DecodeLimits(maxPixels: maxPixels, maxAnimationPixels: maxAnimationPixels)
    }
}
