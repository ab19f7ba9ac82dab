/// Writes the Prometheus text exposition format (version 0.0.4): per family a `# HELP` and a
/// `# TYPE` line, then its samples, `name{label="value"} number`. What never changes between
/// scrapes (the headers, each sample's name and labels) is rendered once (`header`,
/// `samplePrefix`); a scrape appends those bytes and the numbers. Numbers are written as Swift
/// writes them (`3`, `1.9`, `0.0025`), as swift-prometheus did before: scrapers see no change.
struct PrometheusText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 32 * 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// `# HELP name help` (backslashes escaped) and `# TYPE name type`, each with its line feed.
    static func header(_ name: String, help: String, type: String) -> [UInt8] {
        var out = Array("# HELP \(name) ".utf8)
        for byte in help.utf8 {
            if byte == UInt8(ascii: "\\") { out += "\\\\".utf8 } else { out.append(byte) }
        }
        out += "\n# TYPE \(name) \(type)\n".utf8
        return out
    }

    /// A sample's line up to its value: `name{key="value",...} `, or `name ` without labels.
    static func samplePrefix(_ name: String, labels: [(String, String)]) -> [UInt8] {
        var out = Array(name.utf8)
        if !labels.isEmpty {
            out.append(UInt8(ascii: "{"))
            for (i, (key, value)) in labels.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                out += key.utf8
                out += "=\"".utf8
                for byte in value.utf8 {
                    // Backslash, double quote and line feed, escaped as label values require.
                    switch byte {
                    case UInt8(ascii: "\\"): out += "\\\\".utf8
                    case UInt8(ascii: "\""): out += "\\\"".utf8
                    case UInt8(ascii: "\n"): out += "\\n".utf8
                    default: out.append(byte)
                    }
                }
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: " "))
        return out
    }

    mutating func append(_ rendered: [UInt8]) {
        bytes += rendered
    }

    /// `prefix` and a whole number.
    mutating func line(_ prefix: [UInt8], _ value: UInt64) {
        bytes += prefix
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
        } else {
            let start = bytes.count
            var v = value
            while v > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(v % 10))
                v /= 10
            }
            bytes[start...].reverse()
        }
        bytes.append(UInt8(ascii: "\n"))
    }

    /// `prefix` and a number as Swift writes a `Double` (`1.0`, `0.0307`).
    mutating func line(_ prefix: [UInt8], _ value: Double) {
        bytes += prefix
        bytes += value.description.utf8
        bytes.append(UInt8(ascii: "\n"))
    }
}
