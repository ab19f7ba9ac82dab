/// Settings as `section.key = value` strings, layered: defaults < file < environment < flags.
///
/// Each component reads its own keys into a typed struct (`LimitsConfiguration`, ...), validating
/// ranges at start-up. The file is INI-like:
/// ```
/// [server]
/// workers = 4          # comment
/// ```
/// Environment: `KILN_<SECTION>_<KEY>` (`KILN_LIMITS_MAX_PIXELS=20000000` is `limits.max_pixels`).
public struct ConfigValues: Sendable {
    public private(set) var values: [String: String] = [:]
    /// Where each value came from, for error messages ("file kiln.conf line 3", "environment").
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

    public func string(_ key: String, default def: String) -> String { values[key] ?? def }

    public func int(_ key: String, default def: Int, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let raw = values[key] else { return def }
        guard let v = ConfigValues.parseInt(raw), range.contains(v) else {
            throw .invalid(key: key, value: raw, expected: "a whole number in \(range.lowerBound)...\(range.upperBound)", origin: origins[key] ?? "")
        }
        return v
    }

    public func bool(_ key: String, default def: Bool) throws(ConfigError) -> Bool {
        guard let raw = values[key] else { return def }
        switch raw.lowercased() {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw .invalid(key: key, value: raw, expected: "true or false", origin: origins[key] ?? "")
        }
    }

    /// Whole numbers with an optional `k`, `m`, `g` suffix (powers of 1000 for counts; see `bytes` for sizes).
    static func parseInt(_ raw: String) -> Int? {
        let s = raw.replacingUnderscores()
        if let v = Int(s) { return v }
        let units: [(String, Int)] = [("k", 1_000), ("m", 1_000_000), ("g", 1_000_000_000)]
        for (suffix, mult) in units where s.lowercased().hasSuffix(suffix) {
            if let v = Int(s.dropLast()) { return v * mult }
        }
        return nil
    }

    /// A byte size: `1048576`, `512KB`, `100MB`, `1GB` (powers of 1024, as nginx reads them).
    public func bytes(_ key: String, default def: Int, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard let raw = values[key] else { return def }
        let s = raw.replacingUnderscores().uppercased().replacingSuffix("B")
        var v: Int?
        if let n = Int(s) { v = n }
        for (suffix, mult) in [("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)] where s.hasSuffix(suffix) {
            if let n = Int(s.dropLast()) { v = n * mult }
        }
        guard let v, range.contains(v) else {
            throw .invalid(key: key, value: raw, expected: "a size such as 100MB within \(range.lowerBound)...\(range.upperBound) bytes", origin: origins[key] ?? "")
        }
        return v
    }

    /// A duration in seconds: `10`, `10s`, `500ms`, `2m`.
    public func seconds(_ key: String, default def: Double, in range: ClosedRange<Double>) throws(ConfigError) -> Double {
        guard let raw = values[key] else { return def }
        let s = raw.lowercased()
        var v: Double?
        if s.hasSuffix("ms") { v = Double(s.dropLast(2)).map { $0 / 1000 } }
        else if s.hasSuffix("s") { v = Double(s.dropLast()) }
        else if s.hasSuffix("m") { v = Double(s.dropLast()).map { $0 * 60 } }
        else { v = Double(s) }
        guard let v, range.contains(v) else {
            throw .invalid(key: key, value: raw, expected: "a duration such as 10s within \(range.lowerBound)...\(range.upperBound) s", origin: origins[key] ?? "")
        }
        return v
    }

    /// Parses the INI-like file text into `section.key` pairs.
    public static func parseFile(_ text: String, name: String) throws(ConfigError) -> [String: String] {
        var out: [String: String] = [:]
        var section = ""
        for (n, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = Substring(rawLine)
            if let hash = line.firstIndex(of: "#") { line = line[..<hash] }
            let trimmed = line.trimmingSpaces()
            if trimmed.isEmpty { continue }
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = String(trimmed.dropFirst().dropLast()).lowercased()
                continue
            }
            guard let eq = trimmed.firstIndex(of: "="), !section.isEmpty else {
                throw .syntax(file: name, line: n + 1, text: String(rawLine))
            }
            let key = trimmed[..<eq].trimmingSpaces().lowercased()
            var value = trimmed[trimmed.index(after: eq)...].trimmingSpaces()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            out["\(section).\(key)"] = value
        }
        return out
    }

    /// `KILN_<SECTION>_<KEY>` variables as `section.key` pairs.
    public static func fromEnvironment(_ env: [String: String]) -> [String: String] {
        var out: [String: String] = [:]
        for (name, value) in env where name.hasPrefix("KILN_") {
            let rest = name.dropFirst(5).lowercased()
            guard let us = rest.firstIndex(of: "_") else { continue }
            out["\(rest[..<us]).\(rest[rest.index(after: us)...])"] = value
        }
        return out
    }
}

/// A setting that cannot be used; reported at start-up, before any worker starts.
public enum ConfigError: Error, Equatable, Sendable, CustomStringConvertible {
    case invalid(key: String, value: String, expected: String, origin: String)
    case unknownKey(String, origin: String)
    case syntax(file: String, line: Int, text: String)
    case unreadable(String)

    public var description: String {
        switch self {
        case let .invalid(key, value, expected, origin): "setting \(key) = '\(value)' (\(origin)): expected \(expected)"
        case let .unknownKey(key, origin): "unknown setting \(key) (\(origin))"
        case let .syntax(file, line, text): "\(file):\(line): expected 'key = value' inside a [section]: \(text)"
        case let .unreadable(why): "cannot read configuration: \(why)"
        }
    }
}

extension String {
    func replacingUnderscores() -> String { String(filter { $0 != "_" }) }
    func replacingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
