import CKilnShims
import Glibc
import KilnCore

/// One setting given on the command line (`--workers 4` is `server.workers = 4`, origin `--workers`).
public struct ConfigOverride: Sendable, Equatable {
    public var key: String
    public var value: String
    /// Shown in error messages: `--workers`, `--set`.
    public var origin: String

    public init(key: String, value: String, origin: String) {
        self.key = key
        self.value = value
        self.origin = origin
    }

    /// Parses `--set section.key=value`.
    public init(assignment: String, origin: String = "--set") throws(ConfigError) {
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

/// Layers the settings: defaults (in each component's struct) < file < environment < flags, and
/// rejects keys no component knows. Components register their keys: `ServerConfiguration.keys`,
/// `SourceConfiguration.keys`, `LimitsConfiguration.keys`, ...
///
/// Run it again to reload (SIGHUP): it re-reads the file and the environment each time.
public struct ConfigurationLoader: Sendable {
    public var knownKeys: Set<String>

    public init(knownKeys: Set<String>) {
        self.knownKeys = knownKeys
    }

    /// - Parameters:
    ///   - file: `--config FILE`, INI-like (see `ConfigValues.parseFile`); nil for none.
    ///   - environment: the process environment; only `KILN_<SECTION>_<KEY>` variables are read.
    ///   - overrides: command-line settings, later ones win.
    public func load(file: String?, environment: [String: String], overrides: [ConfigOverride]) throws(ConfigError) -> ConfigValues {
        var values = ConfigValues()
        if let file {
            let text = try ConfigurationLoader.readFile(file)
            values.merge(try ConfigValues.parseFile(text, name: file), origin: "file \(file)")
        }
        // Only variables of known sections are settings: KILN_BIN or KILN_SKIP_BUILD of a script
        // are not, while a typo such as KILN_LIMITS_MAX_PIXEL still fails as an unknown key.
        let sections = Set(knownKeys.compactMap { $0.split(separator: ".").first.map(String.init) })
        for (key, value) in ConfigValues.fromEnvironment(environment)
        where sections.contains(String(key.prefix { $0 != "." })) {
            values.merge([key: value], origin: "environment KILN_\(key.uppercased().replacingOccurrences(of: ".", with: "_"))")
        }
        for o in overrides {
            values.merge([o.key: o.value], origin: o.origin)
        }
        try validateKeys(values)
        return values
    }

    /// The process environment as a dictionary (without Foundation).
    public static func processEnvironment() -> [String: String] {
        var out: [String: String] = [:]
        var p = kiln_environ()
        while let entry = p?.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") { out[String(s[..<eq])] = String(s[s.index(after: eq)...]) }
            p = p.map { $0 + 1 }
        }
        return out
    }

    /// Throws `unknownKey` for the first key (in sorted order) that no component registered;
    /// a registered `section.*` accepts every key of that section.
    public func validateKeys(_ values: ConfigValues) throws(ConfigError) {
        for key in values.values.keys.sorted() where !knownKeys.contains(key) {
            // `section.*` registers a section of free keys, such as `[presets]`.
            if knownKeys.contains(String(key.prefix { $0 != "." }) + ".*") { continue }
            throw .unknownKey(key, origin: values.origins[key] ?? "")
        }
    }

    /// The whole file as UTF-8; `unreadable` with the reason otherwise.
    static func readFile(_ path: String) throws(ConfigError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadable("\(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable("\(path): \(String(cString: strerror(errno)))")
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            guard bytes.count <= 1 << 20 else { throw .unreadable("\(path): larger than 1 MB") }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
