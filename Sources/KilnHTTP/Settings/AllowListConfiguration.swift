import KilnModel

/// `[limits]`, the HTTP layer's part: the sizes and qualities a URL that is neither signed nor
/// trusted may ask for (`VariantAllowList`, applied by `RequestGate`). Only the HTTP layer knows
/// how a request got in, so these keys are read here.
public struct AllowListConfiguration: ConfigSection, Equatable {
    public var allowedWidths = Key.allowedWidths.defaultValue
    public var allowedHeights = Key.allowedHeights.defaultValue
    public var allowedQualities = Key.allowedQualities.defaultValue
    public var allowedPolicy = Key.allowedPolicy.defaultValue

    public enum Key {
        public static let allowedWidths = sizes("limits.allowed_widths", "widths")
        public static let allowedHeights = sizes("limits.allowed_heights", "heights")
        public static let allowedQualities = Setting<[Int]>.custom(
            "limits.allowed_qualities", default: [], type: "number list",
            expected: "qualities in 1...100 separated by commas, such as 50,75,90, or empty",
            doc: "the `q:` values unsigned URLs may ask for (the configured default quality always passes); empty: any",
            parse: { VariantAllowList.parseList($0, in: 1...100) }, format: AllowListConfiguration.formatList)
        public static let allowedPolicy = Setting<VariantAllowList.Policy>.choice(
            "limits.allowed_policy", default: .refuse,
            doc: "an unsigned URL's width, height or quality outside `limits.allowed_*`: `refuse` (400 naming the setting "
                + "and its values) or `snap` (up to the next allowed value, the largest when above all; the snapped request "
                + "is the cache key, so such URLs share one entry)")

        static func sizes(_ key: String, _ what: String) -> Setting<[Int]> {
            Setting<[Int]>.custom(
                key, default: [], type: "number list",
                expected: "\(what) in 1...65535 separated by commas, such as 320,640,1280, or empty",
                doc: "the resize \(what) (`rs:`, `\(what == "widths" ? "w" : "h"):`, after `dpr`) unsigned URLs may ask for; "
                    + "signed URLs and nginx's trusted rewrites are not restricted; empty: any",
                parse: { VariantAllowList.parseList($0, in: 1...65_535) }, format: AllowListConfiguration.formatList)
        }
    }

    static func formatList(_ list: [Int]) -> String {
        list.map(String.init).joined(separator: ",")
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.allowedWidths) { $0.allowedWidths = $1 },
        ConfigField(Key.allowedHeights) { $0.allowedHeights = $1 },
        ConfigField(Key.allowedQualities) { $0.allowedQualities = $1 },
        ConfigField(Key.allowedPolicy) { $0.allowedPolicy = $1 },
    ]

    public init() {}

    /// The check `RequestGate` applies to unsigned, untrusted requests.
    public var allowList: VariantAllowList {
        VariantAllowList(widths: allowedWidths, heights: allowedHeights, qualities: allowedQualities, policy: allowedPolicy,
                         keys: .init(widths: Key.allowedWidths.key, heights: Key.allowedHeights.key,
                                     qualities: Key.allowedQualities.key))
    }
}
