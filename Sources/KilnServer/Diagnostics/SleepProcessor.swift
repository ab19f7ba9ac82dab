import KilnModel
import KilnProcessing
import KilnPOSIX

/// Test instrumentation, off by default: `debug.sleep_processor = true` registers the URL option
/// `sleep:<milliseconds>` (0...60000), a processor that blocks the render for exactly that long
/// and returns the image unchanged. It is a processor stage like any other (`process (sleep:3000)`
/// on the status page, the slow log and the render-deadline kill), inside the render and so under
/// the render lock, so the integration tests build their slow requests from it instead of blurs
/// whose duration depends on the machine. Without the setting `sleep:` is an unknown option (400).
/// Never enable it in production: any client could hold a worker for a minute per request.
public struct SleepProcessor: ImageProcessing, Sendable, Hashable {
    public static let name = "sleep"
    public static let maxMilliseconds = 60_000

    public let milliseconds: Int

    public init(milliseconds: Int) {
        self.milliseconds = milliseconds
    }

    public var identifier: String { "\(SleepProcessor.name):\(milliseconds)" }

    /// The registry's constructor: one argument, a whole number of milliseconds in 0...60000.
    @Sendable public static func make(_ arguments: [String]) throws(ProcessingError) -> any ImageProcessing {
        guard arguments.count == 1, let ms = Int(arguments[0]), (0...maxMilliseconds).contains(ms) else {
            throw .invalidArgument(option: name, reason: "milliseconds must be a whole number in 0...\(maxMilliseconds)")
        }
        return SleepProcessor(milliseconds: ms)
    }

    public func process(_ image: PixelBuffer, context: ProcessingContext) throws(ProcessingError) -> PixelBuffer {
        Sleep.milliseconds(milliseconds)
        return image
    }
}

extension ProcessorRegistry {
    /// These processors, plus `sleep` when `debug.sleep_processor` is on (`enabled`).
    public func addingSleepProcessor(if enabled: Bool) -> ProcessorRegistry {
        guard enabled else { return self }
        var registry = self
        registry.register(SleepProcessor.name, make: SleepProcessor.make)
        return registry
    }
}
