import KilnConfigFile
import KilnModel
import KilnServer

/// SIGHUP keeps what only a restart changes (`server.listen`, `backlog`, the socket's mode, owner
/// and group, `status_listen`), and the master logs it when one of them changed. But a flag
/// outranks the file (`kiln serve --listen unix:/run/a.sock --config kiln.toml`): an edit of the
/// file's `listen` leaves the value in force as it was, so the master sees no change and said
/// nothing, and the edit looked ignored. This compares what the file and environment alone give,
/// load to load, and names each such key whose value in force a flag decides.
final class ShadowedRestartKeys {
    static let keys = [ServerConfiguration.Key.listen.key, ServerConfiguration.Key.backlog.key,
                       ServerConfiguration.Key.socketMode.key, ServerConfiguration.Key.socketOwner.key,
                       ServerConfiguration.Key.socketGroup.key, ServerConfiguration.Key.statusListen.key]

    private let options: SettingsOptions
    /// The file and environment's raw values of `keys` at the last load (nil: unreadable then).
    private var last: [String: String?]?

    init(_ options: SettingsOptions) {
        self.options = options
        last = ShadowedRestartKeys.unflagged(options)
    }

    /// One line per restart-only key that the file or environment changed since the last load
    /// while a flag sets the value in force (`effective`); none when nothing is shadowed.
    func changes(effective: ConfigValues) -> [String] {
        let now = ShadowedRestartKeys.unflagged(options)
        defer { if now != nil { last = now } }
        guard let now, let last else { return [] }
        return ShadowedRestartKeys.keys.compactMap { key in
            let origin = effective.origin(key)
            guard origin.hasPrefix("flag"), now[key] != last[key] else { return nil }
            let edited = (now[key] ?? nil).map { "changed to \($0)" } ?? "was removed"
            return "\(key) \(edited) in the file or environment, but \(origin) sets \(effective.string(key) ?? ""), "
                + "which stays (a flag wins, and \(key) changes only on restart)"
        }
    }

    /// The raw values of `keys` from the file and the environment, without the flags.
    static func unflagged(_ options: SettingsOptions) -> [String: String?]? {
        guard let values = try? ConfigurationLoader(catalog: KilnConfiguration.catalog)
            .load(file: options.config, environment: ConfigurationLoader.processEnvironment(), overrides: []) else { return nil }
        var out: [String: String?] = [:]
        for key in keys { out[key] = .some(values.string(key)) }
        return out
    }
}
