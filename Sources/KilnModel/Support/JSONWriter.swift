/// A JSON value written with sorted object keys and fixed number spellings, so that the same
/// value always gives the same bytes (the `ETag` of an `f:json` answer depends on them).
/// Foundation's `JSONEncoder` is not linked into the server's libraries.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int)
    /// Written with at most 6 decimals, trailing zeros removed (`0.004`, `2.8`, `-33.8568`).
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The compact text (no spaces), keys in byte order.
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .number(let d): out += JSONValue.format(d)
        case .string(let s): JSONValue.quote(s, into: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let fields):
            out += "{"
            for (i, key) in fields.keys.sorted(by: { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }).enumerated() {
                if i > 0 { out += "," }
                JSONValue.quote(key, into: &out)
                out += ":"
                fields[key]!.write(into: &out)
            }
            out += "}"
        }
    }

    static func format(_ d: Double) -> String {
        guard d.isFinite else { return "null" }
        let scaled = (abs(d) * 1_000_000).rounded()
        guard scaled < 9e15 else { return String(Int(d.rounded())) }
        let units = Int(scaled)
        var text = String(units / 1_000_000)
        var fraction = String(units % 1_000_000)
        if units % 1_000_000 != 0 {
            fraction = String(repeating: "0", count: 6 - fraction.count) + fraction
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += "." + fraction
        }
        return (d < 0 && units != 0 ? "-" : "") + text
    }

    static func quote(_ s: String, into out: inout String) {
        out += "\""
        escape(s, into: &out)
        out += "\""
    }

    /// `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or `\u00XX` (RFC 8259); anything
    /// else, UTF-8 included, kept as it is. Also the log lines' escaping (KilnServer's `LogLine`).
    public static func escape(_ s: String, into out: inout String) {
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
    }
}
