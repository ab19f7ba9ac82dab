import KilnModel

/// Turns the request's `Operation` values (plain data, in URL order) into processors.
///
/// The one switch over `Operation`: a new URL operation adds a case in KilnModel and a line here.
/// Custom operations are built by the `registry` (the same one whose `resolver` the parser used).
/// Never throws: an operation that cannot be built (a custom name the registry lacks, arguments
/// it refuses) becomes a processor that fails with that error when it runs, a 400.
public struct ProcessorFactory: Sendable {
    public var registry: ProcessorRegistry
    /// The configured watermarks that `wm:` draws (decoded once per process).
    public var watermarks: WatermarkLibrary

    public init(registry: ProcessorRegistry = ProcessorRegistry(), watermarks: WatermarkLibrary = WatermarkLibrary()) {
        self.registry = registry
        self.watermarks = watermarks
    }

    /// The processor that carries out `operation`.
    public func processor(for operation: Operation) -> any ImageProcessing {
        switch operation {
        case .trim(let options): Trim(options)
        case .resize(let options): Resize(options)
        case .crop(let options): Crop(options)
        case .pad(let padding): Pad(padding)
        case .extend(let options): Extend(options)
        case .circle(let background): Circle(background: background)
        case .rounded(let radius): RoundedCorners(radius: radius)
        case .blur(let sigma): GaussianBlur(sigma: sigma)
        case .sharpen(let sigma): Sharpen(sigma: sigma)
        case .grayscale: ColorFilter.grayscale
        case .sepia: ColorFilter.sepia
        case .tint(let colour): ColorFilter.tint(colour)
        case .brightness(let k): ColorFilter.brightness(k)
        case .contrast(let k): ColorFilter.contrast(k)
        case .saturation(let k): ColorFilter.saturation(k)
        case .rotate(let degrees):
            if let rotation = Rotation(rawValue: degrees) {
                Rotate(rotation)
            } else {
                Refused(identifier: operation.identifier,
                        error: .invalidArgument(option: "rotate", reason: "angle must be 90, 180 or 270"))
            }
        case .flip(let direction): Flip(direction)
        case .custom(let custom): customProcessor(custom)
        case .watermark(let options): Watermark(options, mark: watermarks[options.name])
        }
    }

    /// The processors for a request's operations, in order.
    public func processors(for operations: [Operation]) -> [any ImageProcessing] {
        operations.map { processor(for: $0) }
    }

    /// The processor for `operation` with no custom processors registered.
    public static func processor(for operation: Operation) -> any ImageProcessing {
        ProcessorFactory().processor(for: operation)
    }

    /// The processors for `operations` with no custom processors registered.
    public static func processors(for operations: [Operation]) -> [any ImageProcessing] {
        ProcessorFactory().processors(for: operations)
    }

    private func customProcessor(_ custom: CustomOperation) -> any ImageProcessing {
        do {
            if let processor = try registry.make(custom.name, arguments: custom.arguments) { return processor }
            return Refused(identifier: custom.identifier,
                           error: .invalidArgument(option: custom.name, reason: "no such processor in this build"))
        } catch {
            return Refused(identifier: custom.identifier, error: error)
        }
    }
}

/// An operation that could not be built: fails with `error` when run.
struct Refused: ImageProcessing {
    var identifier: String
    var error: ProcessingError
    func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        throw error
    }
}
