import KilnModel

/// `[source]`, the pipeline's part: the local folder sources are read from.
///
/// The `[source]` section is split by the code that reads it: `source.root` here; the remote
/// origins and their limits (`source.origins`, `source.allowed_networks`, `source.*_timeout`,
/// `source.origin_*`, `source.s3_*`, ...) in KilnOrigins' `OriginConfiguration`.
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
