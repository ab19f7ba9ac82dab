/// One setting given on the command line (`--workers 4` is `server.workers = 4`, origin `flag --workers`).
public struct ConfigOverride: Sendable, Equatable {
    public var key: String
    public var value: String
    /// Shown in messages and `kiln config dump`: `flag --workers`, `flag --set`.
    public var origin: String

    public init(key: String, value: String, origin: String) {
        self.key = key
        self.value = value
        self.origin = origin
    }

    /// The named flag of a declared setting (`--workers 4`).
    public init<Value>(_ setting: Setting<Value>, value: String) {
        self.init(key: setting.key, value: value, origin: "flag --\(setting.flag ?? setting.key)")
    }

    /// Parses `--set section.key=value`.
    public init(assignment: String, origin: String = "flag --set") throws(ConfigError) {
        guard let eq = assignment.firstIndex(of: "=") else {
            throw .invalid(key: assignment, value: "", expected: "section.key=value", origin: origin)
        }
        let key = String(assignment[..<eq]).trimmingSpacesAndTabs().lowercased()
        let value = String(assignment[assignment.index(after: eq)...]).trimmingSpacesAndTabs()
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw .invalid(key: key, value: value, expected: "a key written section.key, such as server.workers", origin: origin)
        }
        self.init(key: key, value: value, origin: origin)
    }
}
