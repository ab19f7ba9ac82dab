/// The raw settings as `section.key = value` strings with where each came from, layered:
/// defaults < file < environment < flags (`ConfigurationLoader` in KilnServer does the layering).
///
/// This is what the master validates and hands to its workers (`SettingsSnapshot`); typed values
/// come from the declarations (`Setting`, `ConfigSection`): `try values.value(Setting)`.
public struct ConfigValues: Sendable, Equatable {
    public private(set) var values: [String: String] = [:]
    /// Where each value came from, for messages and `kiln config dump`: `file kiln.toml:3`,
    /// `environment KILN_SERVER_WORKERS`, `flag --workers`. Keys without a value are defaults.
    public private(set) var origins: [String: String] = [:]

    public init(_ values: [String: String] = [:], origin: String = "default") {
        merge(values, origin: origin)
    }

    /// Later layers win.
    public mutating func merge(_ other: [String: String], origin: String) {
        for (k, v) in other {
            values[k] = v
            origins[k] = origin
        }
    }

    public func string(_ key: String) -> String? { values[key] }

    /// Where `key` came from; `default` when no layer set it.
    public func origin(_ key: String) -> String { origins[key] ?? "default" }

    /// The typed value of a declared setting: its default when no layer set it, else the parsed
    /// raw value, or `invalid` naming the key, the value, what was expected and where it came from.
    public func value<Value>(_ setting: Setting<Value>) throws(ConfigError) -> Value {
        guard let raw = values[setting.key] else { return setting.defaultValue }
        guard let v = setting.parse(raw) else {
            throw .invalid(key: setting.key, value: setting.isSecret ? "(hidden)" : raw, expected: setting.expected,
                           origin: origin(setting.key))
        }
        return v
    }
}
