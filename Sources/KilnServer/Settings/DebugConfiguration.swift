import KilnFastCGI
import KilnHTTP
import KilnModel

/// `[debug]`: switches for measuring, never for production.
public struct DebugConfiguration: ConfigSection, Equatable {
    /// Workers answer every request with their PID instead of rendering (`scripts/bench`'s `hop` row).
    public var echoHandler = Key.echoHandler.defaultValue
    /// Registers the `sleep:<ms>` processor (`SleepProcessor`) for the integration tests' slow requests.
    public var sleepProcessor = Key.sleepProcessor.defaultValue
    /// Decodes sleep as long as their source asks (`SleepingDecoders`) for the integration tests.
    public var sleepDecode = Key.sleepDecode.defaultValue

    public enum Key {
        public static let echoHandler = Setting.bool("debug.echo_handler", default: false,
                                                     doc: "answer every request with the worker's PID instead of rendering (benchmarks of the FastCGI hop)")
        public static let sleepProcessor = Setting.bool("debug.sleep_processor", default: false,
                                                        doc: "add the URL option `sleep:<ms>` (0…60000), a processor stage that holds the render that long, for the integration tests' slow requests; never in production (any client could hold a worker)")
        public static let sleepDecode = Setting.bool("debug.sleep_decode", default: false,
                                                     doc: "a decode (still, or before the first frame of an animation) sleeps as long as its source asks with the text `kiln-sleep-decode=<ms>` in its first 64 KiB, for the integration tests' slow decodes; never in production")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.echoHandler) { $0.echoHandler = $1 },
        ConfigField(Key.sleepProcessor) { $0.sleepProcessor = $1 },
        ConfigField(Key.sleepDecode) { $0.sleepDecode = $1 },
    ]

    public init() {}
}
