/// The TOML types a file may use for a setting (the environment and flags are always text).
public enum TOMLKind: String, Sendable, Equatable {
    case string, integer, float, boolean
}

/// One setting, declared once: key, type, default, unit, one line of documentation and the
/// validation (the parser refuses what is out of range or not one of the choices). Everything else
/// derives from the declaration: the typed value (`ConfigSection`), the unknown-key check,
/// `kiln serve --help`, `kiln config dump`, docs/configuration.md's key table and `kiln.example.toml`.
///
/// Declare with the factories of `Setting+Kinds.swift`:
///
///     static let workers = Setting.count("server.workers", default: 4, in: 1...256, doc: "worker processes")
public struct Setting<Value: Sendable>: Sendable {
    /// `section.key`, lower case.
    public let key: String
    public let defaultValue: Value
    /// The type column of the key table: `count 1…256`, `size`, `duration`, `true/false`, ...
    public let type: String
    /// What a valid value looks like, for error messages: `a whole number in 1...256`.
    public let expected: String
    /// One line for people.
    public let doc: String
    /// The default as written in the table and the example file; nil: `format(defaultValue)`.
    public let defaultText: String?
    /// The named command-line flag that also sets it (`--workers`), if any.
    public let flag: String?
    /// TOML types a file may use; the first is the one `format` writes.
    public let tomlKinds: [TOMLKind]
    /// Raw text (file, environment or flag) to the value; nil when invalid.
    public let parse: @Sendable (String) -> Value?
    /// The value as raw text that `parse` reads back.
    public let format: @Sendable (Value) -> String
    /// A secret (signing keys): error messages and `kiln config dump` never show its value.
    public let isSecret: Bool

    public init(key: String, defaultValue: Value, type: String, expected: String, doc: String,
                defaultText: String? = nil, flag: String? = nil, tomlKinds: [TOMLKind], isSecret: Bool = false,
                parse: @escaping @Sendable (String) -> Value?, format: @escaping @Sendable (Value) -> String) {
        self.key = key
        self.defaultValue = defaultValue
        self.type = type
        self.expected = expected
        self.doc = doc
        self.defaultText = defaultText
        self.flag = flag
        self.tomlKinds = tomlKinds
        self.parse = parse
        self.format = format
        self.isSecret = isSecret
    }

    /// The same setting, also set by the named flag `--name`.
    public func flag(_ name: String) -> Setting {
        Setting(key: key, defaultValue: defaultValue, type: type, expected: expected, doc: doc, defaultText: defaultText,
                flag: name, tomlKinds: tomlKinds, isSecret: isSecret, parse: parse, format: format)
    }

    /// The same setting with a default written for people (`one per core`), when the value
    /// depends on the machine.
    public func defaultText(_ text: String) -> Setting {
        Setting(key: key, defaultValue: defaultValue, type: type, expected: expected, doc: doc, defaultText: text,
                flag: flag, tomlKinds: tomlKinds, isSecret: isSecret, parse: parse, format: format)
    }

    /// The same setting marked secret: its value never appears in an error or a dump.
    public func secret() -> Setting {
        Setting(key: key, defaultValue: defaultValue, type: type, expected: expected, doc: doc, defaultText: defaultText,
                flag: flag, tomlKinds: tomlKinds, isSecret: true, parse: parse, format: format)
    }

    /// The declaration without its value type, for lists of every key.
    public var info: SettingInfo {
        let parse = self.parse
        return SettingInfo(key: key, type: type, expected: expected, doc: doc,
                           defaultText: defaultText ?? format(defaultValue), defaultRaw: format(defaultValue),
                           documentedDefault: defaultText == nil, flag: flag, tomlKinds: tomlKinds, isSecret: isSecret,
                           isValid: { parse($0) != nil })
    }
}

/// A setting's declaration without its value type: what the loader, the help, `config dump`,
/// the key table and the example file need.
public struct SettingInfo: Sendable {
    public let key: String
    public let type: String
    public let expected: String
    public let doc: String
    /// The default for people (`64MiB`, `one per core`).
    public let defaultText: String
    /// The effective default as raw text (`2` workers on a 2-core machine).
    public let defaultRaw: String
    /// Whether `defaultText` is a value one can write (false for `one per core`).
    public let documentedDefault: Bool
    public let flag: String?
    public let tomlKinds: [TOMLKind]
    /// A key, salt or shared secret: `kiln config dump` and error messages hide its value.
    public let isSecret: Bool
    public let isValid: @Sendable (String) -> Bool

    public var section: String { String(key.prefix { $0 != "." }) }
    public var name: String { String(key.drop { $0 != "." }.dropFirst()) }
}

/// How one declared setting lands in a field of its section's typed value.
public struct ConfigField<Root>: Sendable {
    public let info: SettingInfo
    let read: @Sendable (ConfigValues, inout Root) throws(ConfigError) -> Void

    public init<Value>(_ setting: Setting<Value>, _ assign: @escaping @Sendable (inout Root, Value) -> Void) {
        info = setting.info
        read = { (values: ConfigValues, root: inout Root) throws(ConfigError) in
            assign(&root, try values.value(setting))
        }
    }
}

/// A section's typed value (`[server]` is `ServerConfiguration`): `init()` holds the declared
/// defaults, `fields` lists every setting of the section and where it goes.
public protocol ConfigSection: Sendable {
    init()
    static var fields: [ConfigField<Self>] { get }
}

extension ConfigSection {
    /// Every field read from `values` (defaults where unset), validated.
    public init(_ values: ConfigValues) throws(ConfigError) {
        self.init()
        for field in Self.fields { try field.read(values, &self) }
    }

    public static var settings: [SettingInfo] { fields.map(\.info) }
    public static var keys: Set<String> { Set(fields.map(\.info.key)) }
}
