import Kiln
import KilnCore

/// The one place where errors of every layer become an HTTP status and a public one-line reason.
public enum ErrorMapping {
    public struct Mapped: Equatable, Sendable {
        public var status: Int
        public var message: String
        /// For `RenderCoordinator`'s classifier, which remembers 4xx answers as negative entries.
        public var tuple: (status: Int, message: String) { (status, message) }
    }

    public static func map(_ error: any Error) -> Mapped {
        switch error {
        case let e as SpecError:
            switch e {
            case let .invalidOption(segment, reason): return .init(status: 400, message: "bad option '\(segment)': \(reason)")
            case let .unknownOption(segment): return .init(status: 400, message: "unknown option '\(segment)'")
            case .missingSourcePath: return .init(status: 400, message: "no source path after the options")
            case let .malformedPath(reason): return .init(status: 400, message: reason)
            case let .forbiddenPath(reason): return .init(status: 403, message: reason)
            }
        case let e as LoadError:
            switch e {
            case let .notFound(m): return .init(status: 404, message: m)
            case let .forbidden(m): return .init(status: 403, message: m)
            case let .tooLarge(m): return .init(status: 413, message: m)
            case let .io(m): return .init(status: 500, message: "cannot read the source: \(m)")
            }
        case let e as PipelineError:
            switch e {
            case let .unsupportedType(mime): return .init(status: 415, message: "not a supported image (content is \(mime)); JPEG, PNG and WebP are")
            }
        case let e as DecodeError:
            switch e {
            case let .corrupt(m): return .init(status: 422, message: "corrupt image: \(m)")
            case let .overLimit(m): return .init(status: 413, message: "image too large: \(m)")
            case let .unsupported(m): return .init(status: 415, message: "unsupported image: \(m)")
            }
        case let e as ProcessingError:
            switch e {
            case let .invalidArgument(option, reason): return .init(status: 400, message: "bad option '\(option)': \(reason)")
            case let .overLimit(m): return .init(status: 413, message: "result too large: \(m)")
            }
        case let e as EncodeError:
            switch e {
            case let .failed(m): return .init(status: 500, message: "encoding failed: \(m)")
            }
        default:
            return .init(status: 500, message: "internal error")
        }
    }
}
