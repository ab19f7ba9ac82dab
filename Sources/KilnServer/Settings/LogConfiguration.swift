import KilnHTTP
import KilnModel
import Logging

/// `[log]`: what the master and the workers write to stderr (`LogLineHandler`, `AccessLog`).
public struct LogConfiguration: ConfigSection, Equatable {
    public var level: Logger.Level = Key.level.defaultValue
    /// Every line of the master and the workers in this format.
    public var format: LogFormat = Key.format.defaultValue
    /// One `info` line per request.
    public var access = Key.access.defaultValue
    /// Take a client's `X-Request-Id` as the request id.
    public var trustRequestID = Key.trustRequestID.defaultValue

    public enum Key {
        public static let level = Setting<Logger.Level>.choice("log.level", default: .info, doc: "swift-log level").flag("log-level")
        public static let format = Setting<LogFormat>.choice("log.format", default: .logfmt,
                                                             doc: "log lines as `logfmt` (key=value) or `json` (one object per line)")
        public static let access = Setting.bool("log.access", default: true,
                                                doc: "one access line per request at `info` (5xx lines are written anyway)")
        public static let trustRequestID = Setting.bool("log.trust_request_id", default: false,
                                                        doc: "use the client's `X-Request-Id` as the request id (only when everything in front of nginx sets or strips it)")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.level) { $0.level = $1 },
        ConfigField(Key.format) { $0.format = $1 },
        ConfigField(Key.access) { $0.access = $1 },
        ConfigField(Key.trustRequestID) { $0.trustRequestID = $1 },
    ]

    public init() {}
}
