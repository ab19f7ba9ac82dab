import KilnCore
import Logging

/// `[log]`: what the master and the workers write to stderr.
public struct LogConfiguration: Sendable, Equatable {
    /// `level`: `trace`, `debug`, `info`, `notice`, `warning`, `error` or `critical`. Default `info`.
    /// Also `--log-level` and `KILN_LOG_LEVEL`.
    public var level: Logger.Level = .info

    public static let keys: Set<String> = ["log.level"]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        if let raw = v.string("log.level") {
            guard let level = Logger.Level(rawValue: raw.lowercased()) else {
                throw .invalid(key: "log.level", value: raw, expected: "one of trace, debug, info, notice, warning, error, critical", origin: v.origins["log.level"] ?? "")
            }
            self.level = level
        }
    }
}
