/// The kinds of settings: each factory fixes the type column, the validation and the text of
/// errors, so a declaration is one line per key.
extension Setting where Value == Int {
    /// A plain whole number (`50000000` or `50_000_000`; no `k`/`m` suffixes) within `range`.
    public static func count(_ key: String, default value: Int, in range: ClosedRange<Int>, doc: String) -> Setting {
        Setting(key: key, defaultValue: value,
                type: "count \(ConfigUnits.formatCount(range.lowerBound))…\(ConfigUnits.formatCount(range.upperBound))",
                expected: "a whole number in \(ConfigUnits.formatCount(range.lowerBound))...\(ConfigUnits.formatCount(range.upperBound)) (no suffixes; 50_000_000 is fine)",
                doc: doc, tomlKinds: [.integer, .string],
                parse: { ConfigUnits.count($0).flatMap { range.contains($0) ? $0 : nil } },
                format: { ConfigUnits.formatCount($0) })
    }

    /// Bytes: `100MiB`, `512KiB`, `1GiB` (`KB`/`MB`/`GB` are the same powers of 1024), a plain number is bytes.
    public static func size(_ key: String, default value: Int, in range: ClosedRange<Int>, doc: String) -> Setting {
        let bounds = "\(ConfigUnits.formatSize(range.lowerBound))…\(ConfigUnits.formatSize(range.upperBound))"
        return Setting(key: key, defaultValue: value, type: "size \(bounds)",
                       expected: "a size such as 100MiB (B, KiB, MiB, GiB, TiB; KB, MB, GB, TB are the same powers of 1024) within \(bounds)",
                       doc: doc, tomlKinds: [.string, .integer],
                       parse: { ConfigUnits.size($0).flatMap { range.contains($0) ? $0 : nil } },
                       format: { ConfigUnits.formatSize($0) })
    }
}

extension Setting where Value == Double {
    /// Seconds, written with a unit: `500ms`, `10s`, `2m`, `1h` (`0` alone is fine).
    public static func duration(_ key: String, default value: Double, in range: ClosedRange<Double>, doc: String) -> Setting {
        let bounds = "\(ConfigUnits.formatDuration(range.lowerBound))…\(ConfigUnits.formatDuration(range.upperBound))"
        return Setting(key: key, defaultValue: value, type: "duration \(bounds)",
                       expected: "a duration with a unit such as 500ms, 10s, 2m or 1h within \(bounds)",
                       doc: doc, tomlKinds: [.string],
                       parse: { ConfigUnits.duration($0).flatMap { range.contains($0) ? $0 : nil } },
                       format: { ConfigUnits.formatDuration($0) })
    }

    /// A fraction such as `0.9` (or `90%`) within `range`.
    public static func fraction(_ key: String, default value: Double, in range: ClosedRange<Double>, doc: String) -> Setting {
        Setting(key: key, defaultValue: value, type: "fraction \(range.lowerBound)…\(range.upperBound)",
                expected: "a fraction within \(range.lowerBound)...\(range.upperBound) such as 0.9 or 90%",
                doc: doc, tomlKinds: [.float, .integer, .string],
                parse: { ConfigUnits.fraction($0).flatMap { range.contains($0) ? $0 : nil } },
                format: { "\($0)" })
    }
}

extension Setting where Value == Bool {
    /// `true` or `false` (the environment and flags also take yes/no, on/off, 1/0).
    public static func bool(_ key: String, default value: Bool, doc: String) -> Setting {
        Setting(key: key, defaultValue: value, type: "true/false", expected: "true or false", doc: doc,
                tomlKinds: [.boolean, .string], parse: { ConfigUnits.bool($0) }, format: { $0 ? "true" : "false" })
    }
}

extension Setting where Value == String {
    /// Text; `check` refuses what is not valid (nil: anything goes).
    public static func text(_ key: String, default value: String, expected: String = "text", doc: String,
                            check: (@Sendable (String) -> Bool)? = nil) -> Setting {
        Setting(key: key, defaultValue: value, type: "string", expected: expected, doc: doc, tomlKinds: [.string],
                parse: { s in check.map { $0(s) ? s : nil } ?? s }, format: { $0 })
    }
}

extension Setting where Value: RawRepresentable & CaseIterable & Sendable, Value.RawValue == String {
    /// One of the enumeration's raw values (any case).
    public static func choice(_ key: String, default value: Value, doc: String) -> Setting {
        let names = Value.allCases.map(\.rawValue)
        return Setting(key: key, defaultValue: value, type: names.joined(separator: " / "),
                       expected: "one of \(names.joined(separator: ", "))", doc: doc, tomlKinds: [.string],
                       parse: { Value(rawValue: Substring($0).trimmingSpacesAndTabs().lowercased()) }, format: { $0.rawValue })
    }
}

extension Setting {
    /// Text in a form of its own (an address, a colour, a mode): `parse` validates it.
    public static func custom(_ key: String, default value: Value, type: String, expected: String, doc: String,
                              parse: @escaping @Sendable (String) -> Value?, format: @escaping @Sendable (Value) -> String) -> Setting {
        Setting(key: key, defaultValue: value, type: type, expected: expected, doc: doc, tomlKinds: [.string],
                parse: parse, format: format)
    }
}
