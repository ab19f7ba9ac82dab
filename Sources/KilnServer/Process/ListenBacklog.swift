import KilnPOSIX

/// How many connections the kernel queues on the listening socket while every worker is busy
/// (`server.backlog`). The default is the kernel's own maximum, `net.core.somaxconn` (4096 since
/// Linux 5.4; php-fpm asks for 511): a burst then waits in the queue, where the master's
/// `server.queue_timeout` shedding answers it with 503 and `Retry-After`, instead of finding the
/// queue full, which a web server reports as its own error (nginx: `connect() ... failed (11:
/// Resource temporarily unavailable)` and a 502).
///
/// `listen(2)` cuts a larger value to `somaxconn` without a word; the master asks for
/// `min(configured, somaxconn)` and logs when it had to cut, so the log tells the real length.
public enum ListenBacklog {
    /// Where Linux tells the limit.
    public static let somaxconnPath = "/proc/sys/net/core/somaxconn"
    /// The limit when the file cannot be read (Linux's default since 5.4).
    public static let assumedLimit = 4096

    /// `net.core.somaxconn`, nil when it cannot be read.
    public static func kernelLimit(path: String = somaxconnPath) -> Int? {
        guard let bytes = try? Files.read(path) else { return nil }
        return parse(bytes)
    }

    /// The number in the file's text (`4096\n`), nil for anything else or below 1.
    static func parse(_ bytes: [UInt8]) -> Int? {
        let digits = bytes.prefix { $0 != UInt8(ascii: "\n") && $0 != UInt8(ascii: " ") }
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              let n = Int(String(decoding: digits, as: UTF8.self)), n >= 1 else { return nil }
        return n
    }

    /// The default of `server.backlog`: the kernel's limit, at most what the setting allows.
    public static var defaultValue: Int {
        min(kernelLimit() ?? assumedLimit, 65_535)
    }

    /// What `listen(2)` is given for `configured` under the kernel's `limit` (nil: unknown, kept),
    /// and whether it was cut.
    public static func effective(configured: Int, limit: Int?) -> (backlog: Int, clamped: Bool) {
        guard let limit, configured > limit else { return (configured, false) }
        return (limit, true)
    }
}
