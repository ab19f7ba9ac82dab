import KilnCore

/// `[source]`: where images come from.
public struct SourceConfiguration: ConfigSection, Equatable {
    /// The folder sources are read from; nothing outside it is served.
    public var root = Key.root.defaultValue

    public enum Key {
        public static let root = Setting.text("source.root", default: ".", expected: "a folder",
                                              doc: "the folder sources are read from; nothing outside it is served",
                                              check: { !$0.isEmpty }).flag("root")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.root) { $0.root = $1 },
    ]

    public init() {}
}
