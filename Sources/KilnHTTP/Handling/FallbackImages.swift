import KilnModel
import KilnPipeline

/// Which failures are answered with a fallback image (`[fallback]`), and how: the pipeline
/// renders the request's options from the fallback file (`ImagePipeline.image(for:accepted:substitute:)`,
/// cached under the file's own key, never the real variant's); this type picks the file by the
/// failure's kind and writes the answer's HTTP parts: the status (kept, or 200), a short
/// `Cache-Control` and `Kiln-Fallback: <class>`, so a CDN or a person can tell a placeholder
/// from the image (the real image is answered as soon as its source exists).
public struct FallbackImages: Sendable, Equatable {
    /// The failure classes, as `Kiln-Fallback` names them.
    public enum Class: String, Sendable, Equatable {
        /// 404: no such source.
        case notFound = "not-found"
        /// 415, 422: not a supported image, or damaged.
        case broken
        /// 502, 504: a remote origin failed or was too slow.
        case originError = "origin-error"
    }

    public var notFound: SubstituteImage?
    public var broken: SubstituteImage?
    public var originError: SubstituteImage?
    /// Answer with the failure's status (else 200).
    public var keepStatus: Bool
    /// `max-age` of fallback answers in seconds; 0: `no-store`.
    public var maxAge: Int

    public init(notFound: SubstituteImage? = nil, broken: SubstituteImage? = nil, originError: SubstituteImage? = nil,
                keepStatus: Bool = true, maxAge: Int = 60) {
        self.notFound = notFound
        self.broken = broken
        self.originError = originError
        self.keepStatus = keepStatus
        self.maxAge = maxAge
    }

    /// The class of a failure that may be answered with a fallback, and its file; nil for
    /// every other failure (a bad URL, a refusal, a limit, Kiln's own failure) and for classes
    /// without a file.
    public func substitute(for error: any Error) -> (Class, SubstituteImage)? {
        guard let failure = error as? PipelineFailure else { return nil }
        switch failure.kind {
        case .notFound: return notFound.map { (.notFound, $0) }
        case .unsupported, .corrupt: return broken.map { (.broken, $0) }
        case .sourceUnavailable, .sourceTimedOut: return originError.map { (.originError, $0) }
        default: return nil
        }
    }

    /// The status of a fallback answer to a failure answered `failed`.
    public func status(failed: Int) -> Int {
        keepStatus ? failed : 200
    }

    /// `Cache-Control` of fallback answers.
    public var cacheControl: String {
        maxAge > 0 ? "public, max-age=\(maxAge)" : "no-store"
    }
}
