/// A section whose keys are free names, such as `[presets]` (`avatar = "rs:96:96:fill"`).
public struct FreeSection: Sendable {
    public let name: String
    /// One line for people.
    public let doc: String
    /// An example key and value (`avatar`, `rs:96:96:fill/circle/f:webp`).
    public let exampleKey: String
    public let exampleValue: String
    /// The example names something that must exist on the machine (a file): the example file
    /// shows it commented out, so that the example file works as it is.
    public let exampleCommented: Bool

    public init(name: String, doc: String, exampleKey: String, exampleValue: String, exampleCommented: Bool = false) {
        self.name = name
        self.doc = doc
        self.exampleKey = exampleKey
        self.exampleValue = exampleValue
        self.exampleCommented = exampleCommented
    }
}

/// Every declared setting, in the order of the declarations: what the loader checks keys
/// against, and what the help, `kiln config dump`, the docs/configuration.md table and the example file list.
public struct SettingsCatalog: Sendable {
    public let settings: [SettingInfo]
    public let freeSections: [FreeSection]
    private let byKey: [String: Int]

    public init(settings: [SettingInfo], freeSections: [FreeSection] = []) {
        self.settings = settings
        self.freeSections = freeSections
        var byKey: [String: Int] = [:]
        for (i, s) in settings.enumerated() { byKey[s.key] = i }
        self.byKey = byKey
    }

    public func info(_ key: String) -> SettingInfo? { byKey[key].map { settings[$0] } }

    public func isFreeSection(_ section: String) -> Bool { freeSections.contains { $0.name == section } }

    /// A declared key, or any key of a free section.
    public func isKnown(_ key: String) -> Bool {
        guard byKey[key] == nil else { return true }
        let parts = key.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 2 && !parts[1].isEmpty && isFreeSection(String(parts[0]))
    }

    /// Section names in declaration order, free sections last.
    public var sections: [String] {
        var out: [String] = []
        for s in settings where !out.contains(s.section) { out.append(s.section) }
        for f in freeSections where !out.contains(f.name) { out.append(f.name) }
        return out
    }

    /// Throws `unknownKey` for the first key (in sorted order) that is not declared.
    public func validateKeys(_ values: ConfigValues) throws(ConfigError) {
        for key in values.values.keys.sorted() where !isKnown(key) {
            throw .unknownKey(key, origin: values.origin(key))
        }
    }
}
