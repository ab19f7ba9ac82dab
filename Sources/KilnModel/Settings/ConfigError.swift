/// A setting that cannot be used; reported at start-up (or by `kiln config check`), before any
/// worker starts. Every description is one line naming the key, and the file and line when the
/// setting came from a file.
public enum ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalid(key: String, value: String, expected: String, origin: String)
    case unknownKey(String, origin: String)
    /// The file is not valid TOML (or not the shape Kiln reads): `file:line: message`.
    case syntax(file: String, line: Int, message: String)
    case unreadable(String)
    /// Something the settings need is missing from the machine (libmagic's database).
    case unavailable(String)

    public var description: String {
        switch self {
        case let .invalid(key, value, expected, origin): "setting \(key) = '\(value)' (\(origin)): expected \(expected)"
        case let .unknownKey(key, origin): "unknown setting \(key) (\(origin))"
        case let .syntax(file, line, message): "\(file):\(line): \(message)"
        case let .unreadable(why): "cannot read configuration: \(why)"
        case let .unavailable(why): why
        }
    }
}
