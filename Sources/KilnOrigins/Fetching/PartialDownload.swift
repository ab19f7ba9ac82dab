import KilnPOSIX

/// A download of a remote source that broke off mid-body, kept so the next attempt asks only for
/// the rest: `Range: bytes=<bytes>-` with `If-Range: <validator>`. The origin answers 206 with the
/// rest when the object is unchanged (appended: `completes`), or 200 with the whole new object
/// when it changed (the partial is dropped). Its bytes live in the disk cache folder
/// (`SharedOriginFiles`), never as a cache entry; only a complete body of the announced length
/// becomes one.
struct PartialDownload: Sendable, Equatable {
    /// The URL it came from (another URL for the same source, after a configuration change, is
    /// another object).
    var url: String
    var etag: String?
    var lastModified: String?
    /// Bytes kept (from the start of the object).
    var bytes: Int
    /// The object's length, when the origin said it (`Content-Length` of the 200, or a 206's total).
    var total: Int?

    /// What `If-Range` sends: a strong `ETag`, else `Last-Modified`; nil when there is neither (a
    /// download without a validator cannot be resumed safely, so it is not kept).
    var validator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }

    /// The request headers that ask for the rest.
    var resumeHeaders: [(name: String, value: String)] {
        [("Range", "bytes=\(bytes)-")] + (validator.map { [("If-Range", $0)] } ?? [])
    }

    /// What a 200 that broke off after `response.body` leaves to resume, nil when it cannot be
    /// resumed (no validator, more bytes than announced).
    init?(url: String, interrupted response: HTTPFetcher.Response) {
        self.url = url
        etag = response.etag
        lastModified = response.lastModified
        bytes = response.body.count
        total = response.contentLength
        if let total, bytes >= total { return nil }
        guard response.status == 200, bytes > 0, validator != nil else { return nil }
    }

    init(url: String, etag: String?, lastModified: String?, bytes: Int, total: Int?) {
        self.url = url
        self.etag = etag
        self.lastModified = lastModified
        self.bytes = bytes
        self.total = total
    }

    /// Why a 206 answering `resumeHeaders` does not continue this download (nil when it does):
    /// its range must start at `bytes`, say the total (equal to the one known), and run to the end;
    /// a complete answer carries exactly that range, an `interrupted` one at most; a changed
    /// `ETag` is another object.
    func mismatch(_ response: HTTPFetcher.Response, interrupted: Bool) -> String? {
        guard let raw = response.contentRange, let range = HTTPFetcher.ContentRange(raw) else {
            return "a 206 without a usable Content-Range (\(response.contentRange ?? "none"))"
        }
        guard range.first == bytes else { return "a 206 from byte \(range.first) for a request from byte \(bytes)" }
        guard let total = range.total else { return "a 206 without the object's length" }
        if let known = self.total, known != total { return "a 206 for an object of \(total) bytes, not \(known)" }
        guard range.last == total - 1 else { return "a 206 ending at byte \(range.last) of \(total)" }
        let expected = range.last - range.first + 1
        if interrupted ? response.body.count > expected : response.body.count != expected {
            return "a 206 with \(response.body.count) bytes for a range of \(expected)"
        }
        if let etag, let new = response.etag, etag != new { return "a 206 of another version (ETag \(new))" }
        return nil
    }

    /// The whole object, when `rest` (a 206's body that `mismatch` accepted) completes it.
    func completes(_ kept: [UInt8], with rest: [UInt8], total: Int) -> [UInt8]? {
        guard kept.count == bytes, bytes + rest.count == total else { return nil }
        return kept + rest
    }

    // MARK: Sidecar text

    var lines: [String] {
        ["kiln-partial/1", url, etag ?? "", lastModified ?? "", "\(bytes)", "\(total ?? -1)"]
    }

    init?(lines: [String]) {
        guard lines.count == 6, lines[0] == "kiln-partial/1", !lines[1].isEmpty, let bytes = Int(lines[4]), bytes > 0,
              let total = Int(lines[5]), total == -1 || total > bytes else { return nil }
        self.init(url: lines[1], etag: lines[2].isEmpty ? nil : lines[2], lastModified: lines[3].isEmpty ? nil : lines[3],
                  bytes: bytes, total: total < 0 ? nil : total)
        guard validator != nil else { return nil }
    }
}
