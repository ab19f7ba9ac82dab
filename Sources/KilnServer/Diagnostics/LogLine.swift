import KilnHTTP
import Logging
import KilnPOSIX
import KilnModel

/// `log.format`: how every log line of the master and the workers is written.
public enum LogFormat: String, CaseIterable, Sendable {
    /// `key=value` pairs separated by spaces (Heroku/Grafana Loki style).
    case logfmt
    /// One JSON object per line.
    case json
}

/// One log line as text, in either format: `time`, `level`, `logger`, `msg`, then the metadata,
/// the fields of access lines first in a fixed order, the rest by name. Always exactly one line:
/// a newline in a value is escaped, never written.
///
/// logfmt: a value is written bare unless it is empty or holds a space, `=`, `"`, `\` or a control
/// character; then it is double-quoted with `\"`, `\\`, `\n`, `\r`, `\t` and `\u00XX` escapes. A
/// nested dictionary (`stage_ms`) becomes `stage_ms.load=0.12 stage_ms.decode=41.3`.
/// JSON: strings escaped as RFC 8259 asks, whole numbers and decimals as JSON numbers, dictionaries
/// as objects, arrays as arrays.
public enum LogLine {
    /// Fields written first, in this order, when present.
    static let leadingKeys = ["pid", "request_id", "method", "uri", "status", "bytes", "cache", "duration_ms",
                              "stage_ms", "reason"]

    public static func format(_ format: LogFormat, time: String, level: Logger.Level, label: String,
                              message: String, metadata: Logger.Metadata) -> String {
        var fields: [(String, Logger.MetadataValue)] = [("time", .string(time)), ("level", .string(level.rawValue)),
                                                        ("logger", .string(label)), ("msg", .string(message))]
        for key in leadingKeys { if let v = metadata[key] { fields.append((key, v)) } }
        for key in metadata.keys.sorted() where !leadingKeys.contains(key) {
            if let v = metadata[key] { fields.append((key, v)) }
        }
        switch format {
        case .logfmt:
            var out = ""
            for (k, v) in fields { appendLogfmt(k, v, to: &out) }
            return out + "\n"
        case .json:
            var out = "{"
            for (i, (k, v)) in fields.enumerated() {
                if i > 0 { out += "," }
                out += jsonString(k) + ":" + json(v)
            }
            return out + "}\n"
        }
    }

    // MARK: logfmt

    static func appendLogfmt(_ key: String, _ value: Logger.MetadataValue, to out: inout String) {
        switch value {
        case let .dictionary(d):
            for k in d.keys.sorted() { if let v = d[k] { appendLogfmt(key + "." + k, v, to: &out) } }
        default:
            if !out.isEmpty { out += " " }
            out += logfmtKey(key) + "=" + logfmtValue(text(value))
        }
    }

    /// Keys keep letters, digits, `_`, `.`, `-`; anything else becomes `_`.
    static func logfmtKey(_ key: String) -> String {
        let k = String(key.unicodeScalars.map { s -> Character in
            s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "." || s == "-" ? Character(s) : "_"
        })
        return k.isEmpty ? "_" : k
    }

    public static func logfmtValue(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains {
            $0 == " " || $0 == "=" || $0 == "\"" || $0 == "\\" || $0.value < 0x20 || $0.value == 0x7F
        }
        guard needsQuotes else { return value }
        return "\"" + escaped(value) + "\""
    }

    // MARK: JSON

    static func json(_ value: Logger.MetadataValue) -> String {
        switch value {
        case let .string(s):
            return jsonString(s)
        case let .stringConvertible(c):
            if let n = c as? Int { return String(n) }
            if let d = c as? Double, d.isFinite { return String(d) }
            return jsonString(c.description)
        case let .dictionary(d):
            return "{" + d.keys.sorted().compactMap { k in d[k].map { jsonString(k) + ":" + json($0) } }
                .joined(separator: ",") + "}"
        case let .array(a):
            return "[" + a.map(json).joined(separator: ",") + "]"
        }
    }

    public static func jsonString(_ s: String) -> String {
        "\"" + escaped(s) + "\""
    }

    /// `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or `\u00XX` (valid in both
    /// formats; anything else, UTF-8 included, is kept as it is).
    static func escaped(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        JSONValue.escape(s, into: &out)
        return out
    }

    /// A value as logfmt text.
    static func text(_ value: Logger.MetadataValue) -> String {
        switch value {
        case let .string(s): s
        case let .stringConvertible(c): c.description
        case let .array(a): a.map(text).joined(separator: ",")
        case .dictionary: json(value)
        }
    }

    // MARK: time

    /// `2026-11-23T21:40:01.123Z` (UTC, milliseconds) from milliseconds since the epoch.
    public static func timestamp(millisecondsSinceEpoch ms: Int64) -> String {
        let t = CivilTime(millisecondsSinceEpoch: ms)
        let pad = CivilTime.pad
        return "\(pad(t.year, 4))-\(pad(t.month, 2))-\(pad(t.day, 2))T\(pad(t.hour, 2)):"
            + "\(pad(t.minute, 2)):\(pad(t.second, 2)).\(pad(t.millisecond, 3))Z"
    }
}
