import KilnModel

/// Why the pipeline could not produce an image, in the pipeline's own terms: a kind and a public
/// one-line message. Every error of every stage (`SpecError`, `LoadError`, `PipelineError`,
/// `DecodeError`, `ProcessingError`, `EncodeError`) becomes one of these (`init(_:)`), and the
/// disk cache remembers failures in this form (the kind's `code`), so a remembered failure and a
/// fresh one read the same.
///
/// No transport here: `KilnHTTP`'s `ErrorMapping` is the one place that turns a kind into an
/// HTTP status.
public struct PipelineFailure: Error, Sendable, Equatable {
    /// What went wrong, coarse enough to pick an answer, stable enough to store.
    public enum Kind: UInt16, Sendable, CaseIterable {
        /// The URL asks for something that cannot be done (bad option, bad argument).
        case invalidRequest = 1
        /// The source path leaves the root or is not readable by policy.
        case forbidden = 2
        /// No such source.
        case notFound = 3
        /// The source, the decoded image or the result is over a configured limit.
        case tooLarge = 4
        /// The bytes are not a supported image (type or variant).
        case unsupported = 5
        /// The image is damaged.
        case corrupt = 6
        /// Kiln's own failure (I/O, encoder, a bug): never the client's fault and never remembered.
        case `internal` = 7
        /// The caller stopped waiting (its client left) before the image was ready: the work
        /// stopped. Nobody reads the answer; never remembered. (Code 9; 8 was an HTTP refusal and
        /// is not reused.)
        case cancelled = 9
        /// A remote source could not be read (an error answer, a broken connection): not the
        /// request's fault, nor Kiln's. Not remembered (the source may be back at the next request).
        case sourceUnavailable = 10
        /// A remote source did not answer in time. Not remembered.
        case sourceTimedOut = 11
        /// Kiln's own capacity for the work is taken for the moment (every worker allowed to
        /// fetch from origins is fetching): retry shortly. Not remembered.
        case busy = 12
        /// A lookup lane worker (`server.lookup_workers`) found no cached answer: the request goes
        /// on to a render worker (the HTTP layer hands it off; no client sees this). Not remembered.
        case renderElsewhere = 13

        /// The number stored in disk entries.
        public var code: UInt16 { rawValue }
        /// Whether a failure of this kind is the same for every later request of the same key
        /// (and may be remembered as a negative cache entry).
        public var isRememberable: Bool {
            switch self {
            case .internal, .cancelled, .sourceUnavailable, .sourceTimedOut, .busy, .renderElsewhere: false
            default: true
            }
        }
    }

    public var kind: Kind
    /// Public: sent to the client as is. For `.internal` a fixed sentence, never library text.
    public var message: String
    /// For the log only (library text of internal failures); never stored, never sent.
    public var detail: String?
    /// Where the failure came from when the pipeline's caches were involved.
    public var outcome: CacheOutcome?

    public init(_ kind: Kind, _ message: String, detail: String? = nil, outcome: CacheOutcome? = nil) {
        self.kind = kind
        self.message = message
        self.detail = detail
        self.outcome = outcome
    }

    /// This failure as seen from `outcome`.
    public func with(outcome: CacheOutcome?) -> PipelineFailure {
        var copy = self
        copy.outcome = outcome
        return copy
    }

    /// The 415 reason: what the content is and what Kiln reads, one whole sentence.
    public static func unsupportedMessage(_ mime: String) -> String {
        "not a supported image (content is \(mime)): Kiln reads \(readableFormats) images"
    }

    /// "JPEG, PNG, …, ICO and JPEG XL": every format Kiln decodes, from `ImageFormat`.
    static let readableFormats: String = {
        let names = ImageFormat.allCases.map(\.displayName)
        return names.dropLast().joined(separator: ", ") + " and " + names[names.count - 1]
    }()

    /// The domain failure of any error a stage or the parser throws.
    public init(_ error: any Error) {
        switch error {
        case let e as PipelineFailure:
            self = e
        case let e as SourceFault:
            self.init(e.underlying)
        case let e as SpecError:
            switch e {
            case let .invalidOption(segment, reason): self.init(.invalidRequest, "bad option '\(segment)': \(reason)")
            case let .unknownOption(segment): self.init(.invalidRequest, "unknown option '\(segment)'")
            case .missingSourcePath: self.init(.invalidRequest, "no source path after the options")
            case let .malformedPath(reason): self.init(.invalidRequest, reason)
            case let .forbiddenPath(reason): self.init(.forbidden, reason)
            }
        case let e as PolicyError:
            self.init(.forbidden, e.message)
        case let e as LoadError:
            switch e {
            case let .notFound(m): self.init(.notFound, m)
            case let .forbidden(m): self.init(.forbidden, m)
            case let .tooLarge(m): self.init(.tooLarge, m)
            case let .io(m): self.init(.internal, PipelineFailure.readFailed, detail: "cannot read the source: \(m)")
            case let .upstream(m): self.init(.sourceUnavailable, m)
            case let .upstreamTimeout(m): self.init(.sourceTimedOut, m)
            case let .busy(m): self.init(.busy, m)
            }
        case let e as PipelineError:
            switch e {
            case let .unsupportedType(mime):
                self.init(.unsupported, PipelineFailure.unsupportedMessage(mime))
            case let .formatLimit(format, size):
                let m = format.maxDimension
                self.init(.tooLarge, "\(format.displayName) output is limited to \(m)x\(m) pixels; "
                          + "this result is \(size.width)x\(size.height)")
            case let .frameOutOfRange(requested, count):
                self.init(.invalidRequest, "bad option 'frame:\(requested)': the image has \(count) frame\(count == 1 ? "" : "s") (0...\(count - 1))")
            case let .pageOutOfRange(requested, count):
                self.init(.invalidRequest, "bad option 'page:\(requested)': the image holds \(count) page\(count == 1 ? "" : "s") (0...\(count - 1))")
            case .byteBudgetAnimation:
                self.init(.invalidRequest, "max_bytes works on still images and this result is an animation: "
                          + "add frame:<n> for one frame, or drop max_bytes")
            }
        case let e as BudgetExcess:
            self.init(.tooLarge, e.message)
        case let e as DecodeError:
            switch e {
            case let .corrupt(m): self.init(.corrupt, "corrupt image: \(m)")
            case let .overLimit(m): self.init(.tooLarge, "image too large: \(m)")
            case let .unsupported(m): self.init(.unsupported, "unsupported image: \(m)")
            }
        case let e as ProcessingError:
            switch e {
            case let .invalidArgument(option, reason): self.init(.invalidRequest, "bad option '\(option)': \(reason)")
            case let .overLimit(m): self.init(.tooLarge, "result too large: \(m)")
            }
        case let e as EncodeError:
            switch e {
            case let .failed(m): self.init(.internal, PipelineFailure.encodeFailed, detail: "encoding failed: \(m)")
            }
        default:
            self.init(.internal, PipelineFailure.internalError, detail: "\(error)")
        }
    }

    /// The fixed public sentences of internal failures (the detail goes to the log).
    public static let readFailed = "internal error while reading the source"
    public static let encodeFailed = "internal error while encoding the image"
    public static let internalError = "internal error"
}
