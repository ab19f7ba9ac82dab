import KilnModel
import KilnPOSIX

/// `[security]`: signed URLs (imgproxy's scheme, `URLSignature`), presets-only and allowed
/// operations (`OptionPolicy`). Without keys Kiln accepts unsigned URLs as before; with keys
/// every URL's first segment is its signature, except requests nginx marks trusted
/// (`fastcgi_param KILN_TRUSTED 1`, e.g. the `/thumb/WxH/` rewrite).
public struct SecurityConfiguration: ConfigSection, Equatable {
    /// Whether unsigned URLs (`/unsafe/...`, and without keys any path) are accepted.
    public enum UnsignedPolicy: String, Sendable, Equatable {
        /// On without keys, off with keys.
        case auto, on, off
    }

    public var keys: [[UInt8]] = Key.keys.defaultValue
    public var salts: [[UInt8]] = Key.salts.defaultValue
    public var keyFile = Key.keyFile.defaultValue
    public var saltFile = Key.saltFile.defaultValue
    public var signatureSize = Key.signatureSize.defaultValue
    public var allowUnsigned = Key.allowUnsigned.defaultValue
    public var presetsOnly = Key.presetsOnly.defaultValue
    public var presetsOnlyAllow = Key.presetsOnlyAllow.defaultValue
    public var allowedOperations = Key.allowedOperations.defaultValue
    /// The key/salt pairs in force, from `keys`/`salts` or the files (`resolve`).
    public private(set) var signingKeys: [SigningKey] = []

    /// The `[security]` keys: the one place their names, types, defaults and ranges are written.
    public enum Key {
        public static let keys = Setting<[[UInt8]]>.custom(
            "security.keys", default: [], type: "hex list", expected: "hex keys separated by commas, such as 943b42…,7f01c9…",
            doc: "signing keys (hex, comma separated); several for rotation, each paired with the salt at its position",
            parse: { SecurityConfiguration.parseHexList($0) }, format: { SecurityConfiguration.formatHexList($0) }).secret()
        public static let salts = Setting<[[UInt8]]>.custom(
            "security.salts", default: [], type: "hex list", expected: "hex salts separated by commas, one per key",
            doc: "the salts of `security.keys` (hex, comma separated), as many as keys",
            parse: { SecurityConfiguration.parseHexList($0) }, format: { SecurityConfiguration.formatHexList($0) }).secret()
        public static let keyFile = Setting.text("security.key_file", default: "",
                                                 doc: "file holding the keys instead (hex, separated by commas or lines; Docker secrets); empty: none")
        public static let saltFile = Setting.text("security.salt_file", default: "",
                                                  doc: "file holding the salts instead; empty: none")
        public static let signatureSize = Setting.count("security.signature_size", default: 32, in: 1...32,
                                                        doc: "bytes of the HMAC kept in the URL's signature (imgproxy's `IMGPROXY_SIGNATURE_SIZE`)")
        public static let allowUnsigned = Setting<UnsignedPolicy>.custom(
            "security.allow_unsigned", default: .auto, type: "auto / true / false", expected: "auto, true or false",
            doc: "accept `/unsafe/...` (and without keys plain paths); auto: only while no key is configured",
            parse: { raw in
                let s = raw.lowercased()
                if s == "auto" { return .auto }
                return ConfigUnits.bool(s).map { $0 ? .on : .off }
            },
            format: { $0 == .auto ? "auto" : ($0 == .on ? "true" : "false") })
        public static let presetsOnly = Setting.bool("security.presets_only", default: false,
                                                     doc: "accept only `pr:` chains (plus `security.presets_only_allow`) from clients; anything else is 403")
        public static let presetsOnlyAllow = Setting<[String]>.custom(
            "security.presets_only_allow", default: ["f", "dpr"], type: "option list",
            expected: "option names or exact options separated by commas, such as f:auto,dpr,q",
            doc: "options allowed beside presets when presets-only: a name allows any argument (`dpr`), `f:auto` only that",
            parse: { SecurityConfiguration.parseOptionList($0) }, format: { $0.joined(separator: ",") })
        public static let allowedOperations = Setting<[String]>.custom(
            "security.allowed_operations", default: [], type: "operation list",
            expected: "operation names separated by commas, such as resize,crop,blur",
            doc: "operations clients may ask for (`resize` covers rs, w, h; request-wide options such as q or f are always allowed); empty: all",
            parse: { SecurityConfiguration.parseOptionList($0, allowArguments: false) }, format: { $0.joined(separator: ",") })
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.keys) { $0.keys = $1 },
        ConfigField(Key.salts) { $0.salts = $1 },
        ConfigField(Key.keyFile) { $0.keyFile = $1 },
        ConfigField(Key.saltFile) { $0.saltFile = $1 },
        ConfigField(Key.signatureSize) { $0.signatureSize = $1 },
        ConfigField(Key.allowUnsigned) { $0.allowUnsigned = $1 },
        ConfigField(Key.presetsOnly) { $0.presetsOnly = $1 },
        ConfigField(Key.presetsOnlyAllow) { $0.presetsOnlyAllow = $1 },
        ConfigField(Key.allowedOperations) { $0.allowedOperations = $1 },
    ]


    public init() {}

    /// Reads the key and salt files, pairs keys with salts by position; `origin` names where
    /// each setting came from. Refuses keys in both places and unequal counts.
    public mutating func resolve(origin: (String) -> String = { _ in "default" }) throws(ConfigError) {
        let keyList = try SecurityConfiguration.source(keys, file: keyFile, inline: Key.keys.key, fileKey: Key.keyFile.key, origin: origin)
        let saltList = try SecurityConfiguration.source(salts, file: saltFile, inline: Key.salts.key, fileKey: Key.saltFile.key, origin: origin)
        guard keyList.count == saltList.count else {
            let saltKey = saltFile.isEmpty ? Key.salts.key : Key.saltFile.key
            throw .invalid(key: saltKey, value: "\(saltList.count) salt(s)",
                           expected: "one salt per key: \(keyList.count) key(s) in \(keyFile.isEmpty ? Key.keys.key : Key.keyFile.key)",
                           origin: origin(saltKey))
        }
        signingKeys = zip(keyList, saltList).map { SigningKey(key: $0, salt: $1) }
    }

    /// The signature check of this configuration.
    public var urlSignature: URLSignature {
        let unsigned = switch allowUnsigned {
        case .auto: signingKeys.isEmpty
        case .on: true
        case .off: false
        }
        return URLSignature(keys: signingKeys, size: signatureSize, allowUnsigned: unsigned)
    }

    /// The option allow-lists of this configuration.
    public var optionPolicy: OptionPolicy {
        OptionPolicy(presetsOnly: presetsOnly, presetsOnlyAllow: presetsOnlyAllow, allowedOperations: allowedOperations)
    }

    static func source(_ inline: [[UInt8]], file: String, inline key: String, fileKey: String,
                       origin: (String) -> String) throws(ConfigError) -> [[UInt8]] {
        guard !file.isEmpty else { return inline }
        guard inline.isEmpty else {
            throw .invalid(key: fileKey, value: file, expected: "empty while \(key) is set (keys come from one place)", origin: origin(fileKey))
        }
        let bytes: [UInt8]
        do throws(SystemError) {
            bytes = try Files.read(file)
        } catch {
            throw .invalid(key: fileKey, value: file, expected: "a readable file (\(Errno.text(error.code)))", origin: origin(fileKey))
        }
        let text = String(decoding: bytes, as: UTF8.self).split(whereSeparator: { $0 == "\n" || $0 == "\r" || $0 == " " || $0 == "\t" })
            .joined(separator: ",")
        guard let list = parseHexList(text), !list.isEmpty else {
            throw .invalid(key: fileKey, value: file, expected: "a file of hex values separated by commas or lines", origin: origin(fileKey))
        }
        return list
    }

    /// `a1b2,c3d4` (spaces allowed around commas; empty entries skipped) to bytes; nil when an
    /// entry is not an even number of hex digits.
    public static func parseHexList(_ raw: String) -> [[UInt8]]? {
        var out: [[UInt8]] = []
        for part in raw.split(separator: ",") {
            let hex = Array(part.utf8.filter { $0 != UInt8(ascii: " ") && $0 != UInt8(ascii: "\t") })
            if hex.isEmpty { continue }
            guard hex.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            var i = 0
            while i < hex.count {
                guard let h = hexValue(hex[i]), let l = hexValue(hex[i + 1]) else { return nil }
                bytes.append(h << 4 | l)
                i += 2
            }
            out.append(bytes)
        }
        return out
    }

    public static func formatHexList(_ list: [[UInt8]]) -> String {
        list.map { Hex.lowercase($0) }.joined(separator: ",")
    }

    /// `f:auto, dpr ,q` to `["f:auto", "dpr", "q"]`: names of letters and `_` (a trailing `:` is
    /// dropped), optionally with exact arguments; nil for anything else.
    static func parseOptionList(_ raw: String, allowArguments: Bool = true) -> [String]? {
        var out: [String] = []
        for part in raw.split(separator: ",") {
            var entry = String(part.filter { $0 != " " && $0 != "\t" })
            if entry.isEmpty { continue }
            if entry.hasSuffix(":") { entry = String(entry.dropLast()) }
            let name = entry.prefix { $0 != ":" }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0 == "_" }),
                  allowArguments || name.count == entry.count else { return nil }
            out.append(entry)
        }
        return out
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
