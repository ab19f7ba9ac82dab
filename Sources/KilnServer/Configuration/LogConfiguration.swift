import KilnCore
import Logging

/// `[log]`: what the master and the workers write to stderr.
public struct LogConfiguration: ConfigSection, Equatable {
    public var level: Logger.Level = Key.level.defaultValue

    public enum Key {
        public static let level = Setting<Logger.Level>.choice("log.level", default: .info, doc: "swift-log level").flag("log-level")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.level) { $0.level = $1 },
    ]

    public init() {}
}
