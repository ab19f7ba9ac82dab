import KilnFastCGI
import KilnHTTP
import KilnModel

/// `[debug]`: switches for measuring, never for production.
public struct DebugConfiguration: ConfigSection, Equatable {
    /// Workers answer every request with their PID instead of rendering (`scripts/bench`'s `hop` row).
    public var echoHandler = Key.echoHandler.defaultValue

    public enum Key {
        public static let echoHandler = Setting.bool("debug.echo_handler", default: false,
                                                     doc: "answer every request with the worker's PID instead of rendering (benchmarks of the FastCGI hop)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.echoHandler) { $0.echoHandler = $1 },
    ]

    public init() {}
}
