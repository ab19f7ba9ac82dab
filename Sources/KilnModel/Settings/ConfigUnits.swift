/// How values are written, the same in the file, the environment and flags: counts are plain
/// whole numbers (`50000000` or `50_000_000`), sizes take `B`, `KiB`, `MiB`, `GiB`, `TiB` (`KB`,
/// `MB`, `GB`, `TB` are the same powers of 1024; a plain number is bytes), durations need a unit:
/// `500ms`, `10s`, `2m`, `1h` (only `0` may go without).
public enum ConfigUnits {
    static let sizeUnits: [(String, Int)] = [
        ("tib", 1 << 40), ("tb", 1 << 40), ("gib", 1 << 30), ("gb", 1 << 30),
        ("mib", 1 << 20), ("mb", 1 << 20), ("kib", 1 << 10), ("kb", 1 << 10), ("b", 1),
    ]
    static let durationUnits: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600)]

    /// `50000000`, `50_000_000`, `-1`. Underscores only between digits; no suffixes.
    public static func count(_ raw: String) -> Int? {
        let s = trimmed(raw)
        let body = s.hasPrefix("-") ? s.dropFirst() : Substring(s)
        guard let first = body.first, let last = body.last, first.isASCIIDigit, last.isASCIIDigit,
              body.allSatisfy({ $0.isASCIIDigit || $0 == "_" }), !body.contains("__") else { return nil }
        return Int(s.filter { $0 != "_" })
    }

    /// `1048576`, `512KiB`, `100 MiB`, `1GB` (powers of 1024) to bytes.
    public static func size(_ raw: String) -> Int? {
        let s = trimmed(raw).lowercased()
        let number = s.prefix { $0.isASCIIDigit || $0 == "_" }
        let unit = trimmed(String(s.dropFirst(number.count)))
        guard let n = count(String(number)) else { return nil }
        if unit.isEmpty { return n }
        guard let mult = sizeUnits.first(where: { $0.0 == unit })?.1 else { return nil }
        let (v, overflow) = n.multipliedReportingOverflow(by: mult)
        return overflow ? nil : v
    }

    /// `64MiB`: the largest unit that divides the size exactly.
    public static func formatSize(_ bytes: Int) -> String {
        for (unit, mult) in [("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)]
        where bytes != 0 && bytes % mult == 0 {
            return "\(bytes / mult)\(unit)"
        }
        return "\(bytes)B"
    }

    /// `500ms`, `10s`, `1.5s`, `2m`, `1h`, `0` to seconds.
    public static func duration(_ raw: String) -> Double? {
        let s = trimmed(raw).lowercased()
        if s == "0" { return 0 }
        let number = s.prefix { $0.isASCIIDigit || $0 == "." }
        let unit = trimmed(String(s.dropFirst(number.count)))
        guard !number.isEmpty, number.first != ".", number.last != ".", let n = Double(number),
              let mult = durationUnits.first(where: { $0.0 == unit })?.1 else { return nil }
        return n * mult
    }

    /// `10s`, `500ms`, `10m`, `1h`: the largest unit that gives a whole number, else seconds.
    public static func formatDuration(_ seconds: Double) -> String {
        if seconds == 0 { return "0s" }
        for (unit, mult) in durationUnits.reversed() {
            let n = seconds / mult
            if n == n.rounded(), n >= 1, n < 1e15 { return "\(Int(n))\(unit)" }
        }
        return "\(seconds)s"
    }

    /// `50_000_000`: underscores every three digits from 10 000 up.
    public static func formatCount(_ n: Int) -> String {
        let digits = String(n.magnitude)
        guard digits.count > 4 else { return String(n) }
        var out = ""
        for (i, c) in digits.enumerated() {
            if i > 0 && (digits.count - i) % 3 == 0 { out += "_" }
            out.append(c)
        }
        return (n < 0 ? "-" : "") + out
    }

    /// `true`/`false` (also `yes`/`no`, `on`/`off`, `1`/`0`, any case).
    public static func bool(_ raw: String) -> Bool? {
        switch trimmed(raw).lowercased() {
        case "1", "true", "yes", "on": true
        case "0", "false", "no", "off": false
        default: nil
        }
    }

    /// `0.9` or `90%`.
    public static func fraction(_ raw: String) -> Double? {
        let s = trimmed(raw)
        let percent = s.hasSuffix("%")
        guard let n = Double(percent ? String(s.dropLast()) : s), n.isFinite else { return nil }
        return percent ? n / 100 : n
    }

    static func trimmed(_ s: String) -> String { s.trimmingSpacesAndTabs() }

    /// Comma-separated items, each trimmed and checked by `item`; empty text: none. Nil when an
    /// item is empty or invalid.
    public static func list<T>(_ raw: String, _ item: (String) -> T?) -> [T]? {
        let text = raw.trimmingSpacesAndTabs()
        guard !text.isEmpty else { return [] }
        var out: [T] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = item(part.trimmingSpacesAndTabs()) else { return nil }
            out.append(value)
        }
        return out
    }

    /// `http://` (or `https://` with `httpsToo`) followed by a host, without spaces or control characters.
    public static func isHTTPURL(_ s: String, httpsToo: Bool) -> Bool {
        let rest: Substring
        if s.hasPrefix("http://") { rest = s.dropFirst(7) } else if httpsToo && s.hasPrefix("https://") { rest = s.dropFirst(8) } else { return false }
        return !rest.isEmpty && !rest.hasPrefix("/") && !s.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F }
    }

    /// `Name: value` as a pair: a token name, a value without control characters.
    public static func header(_ s: String) -> (String, String)? {
        guard let colon = s.firstIndex(of: ":") else { return nil }
        let name = String(s[..<colon])
        let value = String(s[s.index(after: colon)...]).trimmingSpacesAndTabs()
        let token = "!#$%&'*+-.^_`|~"
        guard !name.isEmpty, name.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || token.unicodeScalars.contains($0)) }),
              !value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return (name, value)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
