import KilnModel
import TOMLKit

/// The configuration file: TOML, one table per section (`[server]`, `[limits]`, ...), read into
/// raw `section.key` values with the line each key is on (for messages and `kiln config dump`).
/// Values are checked against the declared TOML types (`socket_mode = 0o660` is refused: the
/// mode is a string, `"0660"`); their ranges and units are checked by the sections.
public enum ConfigFile {
    public struct Entry: Sendable, Equatable {
        public var key: String
        public var value: String
        /// 1-based; 0 when the line could not be found.
        public var line: Int
    }

    /// What `kiln` says when a file fails to parse and looks like the INI format of Kiln before 0.x.
    public static let iniHint = "this looks like the old INI format; the configuration is TOML now: "
        + "quote string values, e.g. listen = \"unix:/tmp/kiln.sock\", sizes and durations too "
        + "(max_file_bytes = \"100MiB\", shutdown_timeout = \"10s\"), and write counts without k/m suffixes "
        + "(max_pixels = 50_000_000); see kiln.example.toml"

    /// Parses `text` (the file `name`, for messages) into raw values, refusing keys `catalog`
    /// does not declare.
    public static func parse(_ text: String, name: String, catalog: SettingsCatalog) throws(ConfigError) -> [Entry] {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let line = error.source.begin.line
            let message = looksLikeINI(text, line: line) ? "\(iniHint) (TOML: \(error.description))" : error.description
            throw .syntax(file: name, line: line, message: message)
        } catch {
            throw .syntax(file: name, line: 0, message: "\(error)")
        }
        let lines = keyLines(text)
        var out: [Entry] = []
        for (section, sectionValue) in table {
            guard let keys = sectionValue.table else {
                throw .syntax(file: name, line: lines[section] ?? 0,
                              message: "'\(section)' is outside a section: put settings under their [section] (\(catalog.sections.map { "[\($0)]" }.joined(separator: ", ")))")
            }
            for (key, value) in keys {
                let full = "\(section).\(key)"
                let line = lines[full] ?? 0
                let origin = "file \(name)" + (line > 0 ? ":\(line)" : "")
                guard catalog.isKnown(full) else { throw .unknownKey(full, origin: origin) }
                let (raw, kind) = rawValue(value)
                let info = catalog.info(full)
                let allowed = info?.tomlKinds ?? [.string]
                guard let kind, allowed.contains(kind) else {
                    let types = allowed.map { "a TOML \($0.rawValue)" }.joined(separator: " or ")
                    throw .invalid(key: full, value: raw, expected: "\(types): \(info?.expected ?? "text in quotes")", origin: origin)
                }
                out.append(Entry(key: full, value: raw, line: line))
            }
        }
        return out.sorted { $0.key < $1.key }
    }

    /// A TOML value as raw text, with its kind (nil for arrays, tables and dates).
    static func rawValue(_ value: TOMLValueConvertible) -> (String, TOMLKind?) {
        switch value.type {
        case .string: (value.string ?? "", .string)
        case .int: (value.int.map { String($0) } ?? "", .integer)
        case .double: (value.double.map { "\($0)" } ?? "", .float)
        case .bool: (value.bool.map { $0 ? "true" : "false" } ?? "", .boolean)
        default: (value.debugDescription, nil)
        }
    }

    /// `section.key` (and top-level `key`) → the line it is set on, from `[section]` headers and
    /// `key = ...` lines.
    static func keyLines(_ text: String) -> [String: Int] {
        var out: [String: Int] = [:]
        var section = ""
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmingSpacesAndTabs()
            if line.hasPrefix("[") {
                section = String(line.dropFirst().prefix { $0 != "]" }).trimmingSpacesAndTabs()
                if out[section] == nil { out[section] = i + 1 }
            } else if !line.hasPrefix("#"), let eq = line.firstIndex(of: "=") {
                var key = String(line[..<eq]).trimmingSpacesAndTabs()
                if key.count >= 2, let q = key.first, q == "\"" || q == "'", key.last == q { key = String(key.dropFirst().dropLast()) }
                let full = section.isEmpty ? key : "\(section).\(key)"
                if out[full] == nil { out[full] = i + 1 }
            }
        }
        return out
    }

    /// Whether the line that failed to parse is an INI-style `key = value` with an unquoted value
    /// (or a `;` comment).
    static func looksLikeINI(_ text: String, line: Int) -> Bool {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1, line <= lines.count else { return false }
        let l = String(lines[line - 1]).trimmingSpacesAndTabs()
        if l.hasPrefix(";") { return true }
        guard !l.hasPrefix("#"), !l.hasPrefix("["), let eq = l.firstIndex(of: "=") else { return false }
        let value = String(l[l.index(after: eq)...]).trimmingSpacesAndTabs()
        guard let first = value.first else { return true }
        return !"\"'[{=".contains(first)
    }
}
