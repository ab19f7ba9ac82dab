import KilnModel
import KilnPipeline

/// `[fallback]`: images answered in place of a source that is missing or broken
/// (`FallbackImages`). Off by default. Each file is checked at start (`validate`).
public struct FallbackConfiguration: ConfigSection, Equatable {
    public var image = Key.image.defaultValue
    public var notFound = Key.notFound.defaultValue
    public var broken = Key.broken.defaultValue
    public var originErrors = Key.originErrors.defaultValue
    public var status = Key.status.defaultValue
    public var maxAge = Key.maxAge.defaultValue

    /// `fallback.status`.
    public enum Status: String, Sendable, Equatable, CaseIterable {
        /// The failure's own status (404, 415, 422, 502, 504).
        case keep
        /// 200.
        case ok = "200"
    }

    public enum Key {
        public static let image = Setting.text(
            "fallback.image", default: "", expected: "the path of an image file",
            doc: "image answered, rendered with the request's options, when the source is missing (404) or not a usable image "
                + "(415, 422); empty: none (the error as is)")
        public static let notFound = Setting.text(
            "fallback.not_found", default: "", expected: "the path of an image file",
            doc: "image for a missing source (404) instead of `fallback.image`; empty: `fallback.image`")
        public static let broken = Setting.text(
            "fallback.broken", default: "", expected: "the path of an image file",
            doc: "image for a source that is not a supported image or is damaged (415, 422) instead of `fallback.image`; empty: `fallback.image`")
        public static let originErrors = Setting.text(
            "fallback.origin_errors", default: "", expected: "the path of an image file",
            doc: "image for a remote origin that failed or timed out (502, 504); opt-in (not `fallback.image`); empty: none")
        public static let status = Setting<Status>.choice(
            "fallback.status", default: .keep,
            doc: "status of a fallback answer: `keep` (the failure's: 404, 415, 422, 502, 504) or `200`")
        public static let maxAge = Setting.duration(
            "fallback.max_age", default: 60, in: 0...86_400,
            doc: "`Cache-Control: public, max-age=…` of fallback answers, so caches ask again soon (0: `no-store`)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.image) { $0.image = $1 },
        ConfigField(Key.notFound) { $0.notFound = $1 },
        ConfigField(Key.broken) { $0.broken = $1 },
        ConfigField(Key.originErrors) { $0.originErrors = $1 },
        ConfigField(Key.status) { $0.status = $1 },
        ConfigField(Key.maxAge) { $0.maxAge = $1 },
    ]

    public init() {}

    /// The images per failure class, from these settings.
    public var images: FallbackImages {
        func file(_ own: String, _ name: String, orImage: Bool) -> SubstituteImage? {
            let path = own.isEmpty && orImage ? image : own
            return path.isEmpty ? nil : SubstituteImage(name: name, path: path)
        }
        return FallbackImages(notFound: file(notFound, FallbackImages.Class.notFound.rawValue, orImage: true),
                              broken: file(broken, FallbackImages.Class.broken.rawValue, orImage: true),
                              originError: file(originErrors, FallbackImages.Class.originError.rawValue, orImage: false),
                              keepStatus: status == .keep, maxAge: Int(maxAge.rounded()))
    }

    /// Reads and decodes every configured file with `pipeline` (at start and on reload): a file
    /// that is missing or not a usable image is a configuration error naming its key.
    public func validate(with pipeline: ImagePipeline) throws(ConfigError) {
        for (key, path) in [(Key.image.key, image), (Key.notFound.key, notFound), (Key.broken.key, broken),
                            (Key.originErrors.key, originErrors)] where !path.isEmpty {
            do {
                try pipeline.check(SubstituteImage(name: "check", path: path))
            } catch {
                throw .invalid(key: key, value: path, expected: "a readable image file (\(PipelineFailure(error).message))",
                               origin: "checked at start")
            }
        }
    }
}
