import CMagic
import KilnModel

/// Identifies bytes by content with libmagic (`MAGIC_MIME_TYPE`), never by file name.
///
/// Not thread-safe: a libmagic cookie must not be used from two threads at once, so this class
/// is deliberately not `Sendable`. Make one per worker process (workers are single-threaded) and
/// keep it: the database is loaded once, when the sniffer is made (a few milliseconds).
///
/// The database is libmagic's default (`magic_load(cookie, NULL)`), which honours the `MAGIC`
/// environment variable. A sniffer without its database would call every file
/// "application/octet-stream", so every request would become a 415; instead making one fails:
/// `load(maxBytes:)` throws `MagicSniffer.DatabaseError`, `init(maxBytes:)` stops the process
/// with that error's message, and a worker calls `checkDatabase()` first thing, so it logs the
/// error and exits non-zero instead of starting (the master's crash-loop guard takes over).
///
/// Only the first `maxBytes` (64 KiB by default) are examined: JPEG, PNG and WebP are known from
/// their first bytes, and text or SVG from the first few hundred; the cap bounds the cost of
/// libmagic's text and encoding checks on large files.
public final class MagicSniffer: TypeSniffing {
    /// How many leading bytes are given to libmagic.
    public let maxBytes: Int
    private let cookie: magic_t

    private init(maxBytes: Int, cookie: magic_t) {
        self.maxBytes = max(maxBytes, 16)
        self.cookie = cookie
    }

    /// Opens libmagic and loads its database; throws when either fails.
    public static func load(maxBytes: Int = 64 * 1024) throws(DatabaseError) -> MagicSniffer {
        MagicSniffer(maxBytes: maxBytes, cookie: try openCookie())
    }

    /// Opens libmagic and loads its database; a database that does not load stops the process
    /// with the reason (`fatalError`). For tests and tools only: the pipeline uses
    /// `load(maxBytes:)`, so the server reports a missing database as one line and does not start.
    public convenience init(maxBytes: Int = 64 * 1024) {
        let cookie: magic_t
        do {
            cookie = try Self.openCookie()
        } catch {
            fatalError("\(error)")
        }
        self.init(maxBytes: maxBytes, cookie: cookie)
    }

    deinit {
        magic_close(cookie)
    }

    /// Loads libmagic's database once and throws if it cannot: for a worker's start-up check.
    public static func checkDatabase() throws(DatabaseError) {
        magic_close(try openCookie())
    }

    /// The MIME type of `data`: "application/x-empty" for no bytes, "application/octet-stream" when
    /// libmagic cannot tell.
    public func sniff(_ data: [UInt8]) -> SniffResult {
        guard !data.isEmpty else { return SniffResult(mimeType: "application/x-empty") }
        let type = data.withUnsafeBytes { bytes -> String? in
            guard let result = magic_buffer(cookie, bytes.baseAddress, min(bytes.count, maxBytes)) else { return nil }
            return String(cString: result)
        }
        // libmagic names an SVG by an `<svg` with its namespace near the start; one that opens with
        // a long comment, a stylesheet instruction or no namespace is "text/xml" or "text/plain" to it.
        if let type, Self.genericXML.contains(type), SVGTokenizer.hasSVGRoot(data) {
            return SniffResult(mimeType: "image/svg+xml")
        }
        return SniffResult(mimeType: type ?? "application/octet-stream")
    }

    static let genericXML: Set<String> = ["text/xml", "application/xml", "text/plain"]

    private static func openCookie() throws(DatabaseError) -> magic_t {
        guard let opened = magic_open(MAGIC_MIME_TYPE) else {
            throw DatabaseError(reason: "magic_open failed")
        }
        guard magic_load(opened, nil) == 0 else {
            let reason = magic_error(opened).map { String(cString: $0) } ?? "magic_load failed"
            magic_close(opened)
            throw DatabaseError(reason: reason)
        }
        return opened
    }
}
