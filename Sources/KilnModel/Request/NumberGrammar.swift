/// The one grammar of numeric option arguments: an optional `-`, decimal digits and, where
/// fractions are allowed, `.` and more digits (`5`, `-20`, `1.5`, `0.25`). No `+`, no hex
/// (`0x2`), no exponent (`1e-300`), no `inf`/`nan`, no spaces: Swift's `Int(_:)` takes `+5` and
/// `Double(_:)` takes all of those, so arguments are checked here first.
enum NumberGrammar {
    /// A whole number (at most 9 digits, so it always fits an Int), or nil.
    static func integer(_ text: String) -> Int? {
        guard isWellFormed(text, fraction: false) else { return nil }
        return Int(text)
    }

    /// A number with an optional fraction, or nil.
    static func decimal(_ text: String) -> Double? {
        guard isWellFormed(text, fraction: true) else { return nil }
        return Double(text)
    }

    private static func isWellFormed(_ text: String, fraction: Bool) -> Bool {
        var bytes = Substring(text).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let whole = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard !whole.isEmpty, whole.count <= 9 || fraction, whole.count <= 32 else { return false }
        let rest = bytes.dropFirst(whole.count)
        if rest.isEmpty { return true }
        guard fraction, rest.first == UInt8(ascii: "."), rest.count > 1, rest.count <= 33 else { return false }
        return rest.dropFirst().allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }
}
