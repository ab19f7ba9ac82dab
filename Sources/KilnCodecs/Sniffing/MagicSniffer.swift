import CMagic
import KilnCore

/// Identifies bytes by content with libmagic (`MAGIC_MIME_TYPE`), never by file name.
///
/// Not thread-safe: a libmagic cookie must not be used from two threads at once, so this class
/// is deliberately not `Sendable`. Make one per worker process (workers are single-threaded) and
/// keep it: the database is loaded lazily on the first `sniff` (a few milliseconds) and reused.
///
/// Only the first `maxBytes` (64 KiB by default) are examined: JPEG, PNG and WebP are known from
/// their first bytes, and text or SVG from the first few hundred; the cap bounds the cost of
/// libmagic's text and encoding checks on large files.
public final class MagicSniffer: TypeSniffing {
    /// How many leading bytes are given to libmagic.
    public let maxBytes: Int
    private var cookie: magic_t?
    private var loadFailed = false

    public init(maxBytes: Int = 64 * 1024) {
        self.maxBytes = max(maxBytes, 16)
    }

    deinit {
        if let cookie { magic_close(cookie) }
    }

    /// The MIME type of `data`: "application/x-empty" for no bytes, "application/octet-stream" when
    /// libmagic cannot tell (or its database failed to load, see `isAvailable`).
    public func sniff(_ data: [UInt8]) -> SniffResult {
        guard !data.isEmpty else { return SniffResult(mimeType: "application/x-empty") }
        guard let cookie = loadedCookie() else { return SniffResult(mimeType: "application/octet-stream") }
        let type = data.withUnsafeBytes { bytes -> String? in
            guard let result = magic_buffer(cookie, bytes.baseAddress, min(bytes.count, maxBytes)) else { return nil }
            return String(cString: result)
        }
        return SniffResult(mimeType: type ?? "application/octet-stream")
    }

    /// Whether libmagic's database is loaded (loads it on first use). A worker can check this at
    /// start-up: without the database every request would be refused as an unknown type.
    public var isAvailable: Bool { loadedCookie() != nil }

    private func loadedCookie() -> magic_t? {
        if let cookie { return cookie }
        guard !loadFailed else { return nil }
        guard let opened = magic_open(MAGIC_MIME_TYPE) else {
            loadFailed = true
            return nil
        }
        guard magic_load(opened, nil) == 0 else {
            magic_close(opened)
            loadFailed = true
            return nil
        }
        cookie = opened
        return opened
    }
}
