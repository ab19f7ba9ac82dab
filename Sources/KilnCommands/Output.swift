import KilnOrigins
import KilnHTTP
import Glibc
import KilnServer
import KilnPOSIX

/// Text for people on stdout (the CLI's answers; logs go to stderr), and the few formats the
/// `cache` and `warm` commands print.
enum Output {
    /// One line on stdout, written at once (no buffering surprises when piped).
    static func line(_ text: String) {
        write(fd: 1, text + "\n")
    }

    static func write(fd: Int32, _ text: String) {
        try? FileDescriptorIO.writeAll(fd, Array(text.utf8))
    }

    /// `1.5 MB`, `312 KB`, `80 B` (powers of 1024, as the configuration's sizes).
    static func bytes(_ n: Int) -> String {
        let units = ["B", "KB", "MB", "GB", "TB"]
        var value = Double(n)
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(n) B" : "\(fixed(value, value < 10 ? 1 : 0)) \(units[unit])"
    }

    /// `value` with `digits` decimals (no Foundation).
    static func fixed(_ value: Double, _ digits: Int) -> String {
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = Int((abs(value) * scale).rounded())
        let whole = scaled / Int(scale), frac = scaled % Int(scale)
        var text = (value < 0 && scaled != 0 ? "-" : "") + String(whole)
        if digits > 0 {
            let f = String(frac)
            text += "." + String(repeating: "0", count: digits - f.count) + f
        }
        return text
    }

    /// `12.3 s`, `850 ms`.
    static func duration(seconds: Double) -> String {
        seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : "\(fixed(seconds, 1)) s"
    }

    /// A JSON string literal (the escaping of the server's JSON log lines).
    static func jsonString(_ s: String) -> String {
        LogLine.jsonString(s)
    }
}
