/// Error bodies are one line of text (`text/plain`, the reason and a line feed), and a reason
/// may quote the request's path (`no such file 'a%0D%0Ab.jpg'` decodes to a CR LF). So every
/// control character of a reason is written as an escape before it becomes a body: `\n`, `\r`,
/// `\t`, else `\u00XX` (`\u2028`/`\u2029` for the Unicode line and paragraph separators, C1
/// controls such as NEL included). The access line escapes its fields itself (`LogLine`).
public enum OneLineText {
    /// `text` with every control character escaped; text without one is returned as it is.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard isControl(scalar) else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            }
        }
        return out
    }

    /// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
    static func isControl(_ s: Unicode.Scalar) -> Bool {
        s.value < 0x20 || (0x7f...0x9f).contains(s.value) || s.value == 0x2028 || s.value == 0x2029
    }
}
