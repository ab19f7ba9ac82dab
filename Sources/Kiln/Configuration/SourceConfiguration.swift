import KilnCore

/// `[source]`: where images come from.
public struct SourceConfiguration: Sendable, Equatable {
    /// `root`: the folder sources are read from; nothing outside it is served. Default `.`.
    public var root = "."

    public static let keys: Set<String> = ["source.root"]

    public init() {}

    public init(_ v: ConfigValues) throws(ConfigError) {
        root = v.string("source.root", default: root)
        guard !root.isEmpty else {
            throw .invalid(key: "source.root", value: root, expected: "a folder", origin: v.origins["source.root"] ?? "")
        }
    }
}
