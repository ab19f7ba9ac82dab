import CKilnProcessShims
import Glibc
import KilnModel
import KilnPOSIX

/// Layers the raw settings: defaults (the declarations) < TOML file < environment < flags, and
/// refuses keys that no declaration knows (`KilnConfiguration.catalog`).
///
/// Run it again to reload (SIGHUP): it re-reads the file and the environment each time.
///
/// It lives in KilnConfigFile, apart from the server (it knows settings only through the catalog
/// it is given), with `ConfigFile`: only the master and the
/// command line read TOML (TOMLKit needs the whole of Foundation and ICU); `kiln-worker` takes the
/// master's validated `SettingsSnapshot` and links neither (docs/benchmarks.md, "Memory").
public struct ConfigurationLoader: Sendable {
    public var catalog: SettingsCatalog

    /// `catalog`: every declared key (`KilnConfiguration.catalog` for the server).
    public init(catalog: SettingsCatalog) {
        self.catalog = catalog
    }

    /// - Parameters:
    ///   - file: `--config FILE`, TOML (see `ConfigFile`); nil for none.
    ///   - environment: the process environment; only `KILN_<SECTION>_<KEY>` variables of known
    ///     sections are read.
    ///   - overrides: command-line settings, later ones win.
    public func load(file: String?, environment: [String: String], overrides: [ConfigOverride]) throws(ConfigError) -> ConfigValues {
        var values = ConfigValues()
        if let file {
            values = try loadFile(file)
        }
        // Only variables of known sections are settings: KILN_BIN or KILN_SKIP_BUILD of a script
        // are not, while a typo such as KILN_LIMITS_MAX_PIXEL still fails as an unknown key.
        let sections = Set(catalog.sections)
        for (name, value) in environment.sorted(by: { $0.key < $1.key }) where name.hasPrefix("KILN_") {
            let rest = name.dropFirst(5).lowercased()
            guard let us = rest.firstIndex(of: "_"), sections.contains(String(rest[..<us])) else { continue }
            values.merge(["\(rest[..<us]).\(rest[rest.index(after: us)...])": value], origin: "environment \(name)")
        }
        for o in overrides {
            values.merge([o.key: o.value], origin: o.origin)
        }
        try catalog.validateKeys(values)
        return values
    }

    /// The file's settings alone, origins `file NAME:LINE` (`kiln config check`).
    public func loadFile(_ file: String) throws(ConfigError) -> ConfigValues {
        var values = ConfigValues()
        let text = try ConfigurationLoader.readFile(file)
        for entry in try ConfigFile.parse(text, name: file, catalog: catalog) {
            values.merge([entry.key: entry.value], origin: "file \(file)" + (entry.line > 0 ? ":\(entry.line)" : ""))
        }
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

    /// The whole file as UTF-8; `unreadable` with the reason otherwise.
    static func readFile(_ path: String) throws(ConfigError) -> String {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .unreadable("\(path): \(Errno.text(Errno.current))") }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .unreadable("\(path): not a regular file") }
        guard st.st_size <= 1 << 20 else { throw .unreadable("\(path): larger than 1 MB") }
        do throws(SystemError) {
            return String(decoding: try Files.read(path), as: UTF8.self)
        } catch {
            throw .unreadable("\(path): \(Errno.text(error.code))")
        }
    }
}
