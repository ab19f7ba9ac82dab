/// Writes the Prometheus text exposition format (version 0.0.4): per family a `# HELP` and a
/// `# TYPE` line, then its samples, `name{label="value"} number`. Numbers are written as Swift
/// writes them (`3`, `1.9`, `0.0025`), as swift-prometheus did before: scrapers saw no change.
struct PrometheusText {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 16 * 1024) {
        bytes.reserveCapacity(capacity)
    }

    /// `# HELP name help` (backslashes escaped) and `# TYPE name type`.
    mutating func family(_ name: String, help: String, type: String) {
        append("# HELP ")
        append(name)
        append(" ")
        for byte in help.utf8 {
            if byte == UInt8(ascii: "\\") { append("\\\\") } else { bytes.append(byte) }
        }
        append("\n# TYPE ")
        append(name)
        append(" ")
        append(type)
        append("\n")
    }

    /// `name{labels} value`; without labels `name value`.
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: String) {
        append(name)
        if !labels.isEmpty {
            append("{")
            for (i, (key, labelValue)) in labels.enumerated() {
                if i > 0 { append(",") }
                append(key)
                append("=\"")
                appendEscaped(labelValue)
                append("\"")
            }
            append("}")
        }
        append(" ")
        append(value)
        append("\n")
    }

    /// A histogram series: cumulative `_bucket{le=...}` per bound and `+Inf`, `_sum`, `_count`.
    /// `counts` has one entry per bound and one above the last; `sum` is in the bounds' unit.
    mutating func histogram(_ name: String, labels: [(String, String)] = [], bounds: [Double], counts: [UInt64], sum: Double) {
        var cumulative: UInt64 = 0
        for (bound, count) in zip(bounds, counts) {
            cumulative &+= count
            sample(name + "_bucket", labels: labels + [("le", "\(bound)")], String(cumulative))
        }
        let total = counts.reduce(UInt64(0), &+)
        sample(name + "_bucket", labels: labels + [("le", "+Inf")], String(total))
        sample(name + "_sum", labels: labels, "\(sum)")
        sample(name + "_count", labels: labels, String(total))
    }

    private mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Backslash, double quote and line feed, escaped as the format requires in label values.
    private mutating func appendEscaped(_ value: String) {
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): append("\\\\")
            case UInt8(ascii: "\""): append("\\\"")
            case UInt8(ascii: "\n"): append("\\n")
            default: bytes.append(byte)
            }
        }
    }
}
