import KilnModel

/// `[presets]`: named option chains for `preset:<name>` (`pr:`), Nuke's processor composition.
///
///     [presets]
///     avatar = "rs:96:96:fill/circle/f:webp"
///     thumb  = "rs:200:200:fill/q:70"
///
/// A preset expands in place, so `pr:avatar/bl:2/a.jpg` is `rs:96:96:fill/circle/f:webp/bl:2/a.jpg`;
/// the cache key holds the expansion, so redefining a preset makes new variants. Presets may not
/// use other presets. Default: none. Every preset is parsed at start-up; a bad one stops the start.
public struct PresetConfiguration: Sendable, Equatable {
    /// Preset name (lower case) → option chain.
    public var chains: [String: String] = [:]
    /// Where each preset came from (`file kiln.toml:12`), for error messages.
    public var origins: [String: String] = [:]

    /// A section of free keys: every `presets.<name>` is a preset.
    public static let section = FreeSection(
        name: "presets", doc: "an option chain for `pr:<name>` (`KILN_PRESETS_<NAME>` in the environment)",
        exampleKey: "avatar", exampleValue: "rs:96:96:fill/circle/f:webp")

    public init(chains: [String: String] = [:]) {
        self.chains = chains
    }

    public init(_ v: ConfigValues) {
        for (key, value) in v.values where key.hasPrefix("presets.") {
            let name = String(key.dropFirst("presets.".count))
            chains[name] = value
            origins[name] = v.origin(key)
        }
    }

    /// Parses every preset with `parser` (which must carry these chains).
    public func validate(with parser: SpecParser) throws(ConfigError) {
        do {
            try parser.validatePresets()
        } catch {
            let name = chains.keys.sorted().first { n in
                (try? parser.parse("/pr:\(n)/x", isDecoded: true)) == nil
            } ?? ""
            throw .invalid(key: "presets.\(name)", value: chains[name] ?? "", expected: "a chain of options such as rs:96:96:fill/circle/f:webp (\(PipelineFailure(error).message))",
                           origin: origins[name] ?? "default")
        }
    }
}
