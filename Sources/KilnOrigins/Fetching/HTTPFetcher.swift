import CKilnFetch
import Glibc

/// One HTTP(S) request with libcurl: an origin's GET, or a call of the shared result store
/// (`S3ObjectClient`: GET, PUT, DELETE, list) or of a purge (`PURGE`, a hook's POST) (`kiln_fetch`, which loads libcurl on first
/// use): bounded in time, in redirects and in bytes, http and https only, no proxy from the
/// environment, and every connection's address (after DNS, after each redirect) shown to
/// `checkAddress` first, which may refuse it (the SSRF guard; `OriginAddressPolicy`).
/// Synchronous, like the worker that calls it.
public struct HTTPFetcher: Sendable {
    public var connectTimeout: Double
    public var timeout: Double
    public var maxRedirects: Int
    public var maxBytes: Int
    /// A body that arrives slower than `minSpeed` bytes a second over a window of `minSpeedTime`
    /// seconds (whole seconds, rounded up), counted from the end of the headers, is abandoned as
    /// a time-out; 0: never. (Waiting for the headers is `timeout`'s business.)
    public var minSpeed: Int
    public var minSpeedTime: Double

    public init(connectTimeout: Double, timeout: Double, maxRedirects: Int, maxBytes: Int,
                minSpeed: Int = 0, minSpeedTime: Double = 0) {
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maxRedirects = maxRedirects
        self.maxBytes = maxBytes
        self.minSpeed = minSpeed
        self.minSpeedTime = minSpeedTime
    }

    /// An HTTP answer, whatever its status.
    public struct Response: Sendable, Equatable {
        public var status: Int
        public var body: [UInt8]
        public var etag: String?
        public var lastModified: String?
        public var contentLength: Int?
        /// A 206's `Content-Range`, raw (`ContentRange(_:)` parses it).
        public var contentRange: String?
        public var redirects: Int
        /// Whether the transfer proves where the body ends (`Content-Length`, chunked, HTTP/2
        /// framing); false for a body that ended when the connection closed, as a cut one does.
        public var delimited: Bool
        /// `Content-Type`, nil when absent.
        public var contentType: String?
        /// S3 user metadata: the `x-amz-meta-<name>` headers by lower-cased `<name>`.
        public var metadata: [String: String] = [:]

        public init(status: Int, body: [UInt8], etag: String? = nil, lastModified: String? = nil,
                    contentLength: Int? = nil, contentRange: String? = nil, redirects: Int = 0, delimited: Bool = true) {
            self.status = status
            self.body = body
            self.etag = etag
            self.lastModified = lastModified
            self.contentLength = contentLength
            self.contentRange = contentRange
            self.redirects = redirects
            self.delimited = delimited
        }
    }

    /// `Content-Range: bytes first-last/total` (`total` nil for `*`); nil for anything else
    /// (`bytes */total` of a 416 included).
    public struct ContentRange: Sendable, Equatable {
        public var first: Int
        public var last: Int
        public var total: Int?

        public init?(_ text: String) {
            let t = Substring(text)
            guard t.hasPrefix("bytes ") else { return nil }
            let spec = t.dropFirst(6).split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard spec.count == 2 else { return nil }
            let bounds = spec[0].split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
            guard bounds.count == 2, let first = ContentRange.number(bounds[0]), let last = ContentRange.number(bounds[1]),
                  first <= last else { return nil }
            if spec[1] == "*" {
                total = nil
            } else {
                guard let total = ContentRange.number(spec[1]), last < total else { return nil }
                self.total = total
            }
            self.first = first
            self.last = last
        }

        public init(first: Int, last: Int, total: Int?) {
            self.first = first
            self.last = last
            self.total = total
        }

        /// Digits only (no sign, no spaces), at most 18 of them.
        private static func number(_ s: Substring) -> Int? {
            guard !s.isEmpty, s.utf8.count <= 18, s.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int(s)
        }
    }

    /// Why there is no answer.
    public enum Failure: Error, Equatable, Sendable {
        /// libcurl is not installed.
        case unavailable(String)
        /// `checkAddress` refused a connection: its reason.
        case refused(String)
        /// The body is over `maxBytes`.
        case tooLarge(String)
        case timeout(String)
        /// Too many redirects, or one to another protocol.
        case redirects(String)
        /// DNS, connect, TLS ... (before any byte of a 200 or 206 body arrived).
        case transport(String)
        /// A 200 or 206 whose body broke off (connection cut or time-out) after some bytes: the
        /// answer so far (headers and the bytes received), for a later `Range` request.
        case interrupted(Response, reason: String, timedOut: Bool)
        /// Never started by the caller's own limits (no slot or token for the origin in time, no
        /// time left before the request's deadline): why.
        case notStarted(String)
        /// Never started because every worker allowed to fetch is fetching
        /// (`source.fetch_workers_max`): this worker stays free for local sources.
        case busy(String)
    }

    /// GETs `url` with extra request `headers` (`If-None-Match` makes it conditional: a 304 has no
    /// body; `Range`, a signature ...). `checkAddress` gets each connection's address (4 or 16
    /// bytes) and returns nil to allow it or the reason to refuse it.
    public func get(_ url: String, headers: [(name: String, value: String)] = [],
                    checkAddress: ([UInt8]) -> String?) throws(Failure) -> Response {
        try send("GET", url, headers: headers, checkAddress: checkAddress)
    }

    /// Sends `method` (`GET`, `HEAD`, `PUT`, `DELETE`, `POST`, `PURGE`...) to `url` with `body`
    /// (sent as it is, with no `Expect: 100-continue` wait) and extra `headers`; otherwise as `get`.
    public func send(_ method: String, _ url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = [],
                     checkAddress: ([UInt8]) -> String?) throws(Failure) -> Response {
        let headers = body.isEmpty ? headers : headers + [(name: "Expect", value: "")]
        return try withoutActuallyEscaping(checkAddress) { (check) throws(Failure) -> Response in
            let guardian = AddressGuard(check)
            var result = kiln_fetch_result()
            // Header lines as C strings that live until kiln_fetch returns (no CR/LF smuggling).
            // An empty value (`Name:`) removes a header curl would add (`Expect`).
            let lines = headers.map { header in
                let value = String(String.UnicodeScalarView(header.value.unicodeScalars.filter { $0 != "\r" && $0 != "\n" }))
                return strdup(value.isEmpty ? header.name + ":" : header.name + ": " + value)
            }
            defer { lines.forEach { free($0) } }
            let outcome = url.withCString { cURL in
                method.withCString { cMethod in
                    body.withUnsafeBufferPointer { cBody in
                        lines.map { UnsafePointer($0) }.withUnsafeBufferPointer { cHeaders in
                            var request = kiln_fetch_request(
                                url: cURL, connect_timeout_ms: HTTPFetcher.milliseconds(connectTimeout),
                                timeout_ms: HTTPFetcher.milliseconds(timeout), max_redirects: maxRedirects,
                                max_bytes: Int64(maxBytes), headers: cHeaders.baseAddress, header_count: Int32(cHeaders.count),
                                check: HTTPFetcher.trampoline, check_context: Unmanaged.passUnretained(guardian).toOpaque(),
                                low_speed_limit: minSpeed > 0 && minSpeedTime > 0 ? minSpeed : 0,
                                low_speed_time: Int(minSpeedTime.rounded(.up)),
                                method: cMethod, body: cBody.isEmpty ? nil : cBody.baseAddress, body_length: cBody.count)
                            return withExtendedLifetime(guardian) { kiln_fetch(&request, &result) }
                        }
                    }
                }
            }
            defer { kiln_fetch_release(&result) }
            let message = HTTPFetcher.text(result.message)
            let cut = Int(outcome) == Int(KILN_FETCH_TRANSPORT) || Int(outcome) == Int(KILN_FETCH_TIMEOUT)
            if cut && (result.status == 200 || result.status == 206) && result.length > 0 {
                throw .interrupted(HTTPFetcher.response(result), reason: message,
                                   timedOut: Int(outcome) == Int(KILN_FETCH_TIMEOUT))
            }
            switch Int(outcome) {
            case Int(KILN_FETCH_OK): break
            case Int(KILN_FETCH_UNAVAILABLE): throw .unavailable(message)
            case Int(KILN_FETCH_REFUSED): throw .refused(guardian.refusal ?? message)
            case Int(KILN_FETCH_TOO_LARGE): throw .tooLarge(message)
            case Int(KILN_FETCH_TIMEOUT): throw .timeout(message)
            case Int(KILN_FETCH_REDIRECTS): throw .redirects(message)
            default: throw .transport(message)
            }
            return HTTPFetcher.response(result)
        }
    }

    /// The answer in `result` (complete or not).
    private static func response(_ result: kiln_fetch_result) -> Response {
        let body = result.body.map { Array(UnsafeBufferPointer(start: $0, count: result.length)) } ?? []
        let etag = text(result.etag), modified = text(result.last_modified), range = text(result.content_range)
        var response = Response(status: result.status, body: body, etag: etag.isEmpty ? nil : etag,
                                lastModified: modified.isEmpty ? nil : modified,
                                contentLength: result.content_length >= 0 ? Int(result.content_length) : nil,
                                contentRange: range.isEmpty ? nil : range, redirects: result.redirects,
                                delimited: result.delimited != 0)
        let type = text(result.content_type)
        response.contentType = type.isEmpty ? nil : type
        for line in text(result.meta).split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            response.metadata[String(line[..<colon])] = String(line[line.index(after: colon)...].drop { $0 == " " })
        }
        return response
    }

    /// The Swift side of `kiln_fetch`'s address check.
    private final class AddressGuard {
        let check: ([UInt8]) -> String?
        var refusal: String?
        init(_ check: @escaping ([UInt8]) -> String?) { self.check = check }
    }

    private static let trampoline: kiln_fetch_address_check = { context, address, length in
        guard let context, let address, length == 4 || length == 16 else { return 1 }
        let guardian = Unmanaged<AddressGuard>.fromOpaque(context).takeUnretainedValue()
        if let why = guardian.check(Array(UnsafeBufferPointer(start: address, count: Int(length)))) {
            guardian.refusal = why
            return 1
        }
        return 0
    }

    private static func milliseconds(_ seconds: Double) -> Int { max(1, Int((seconds * 1000).rounded(.up))) }

    /// A NUL-terminated C array field as text.
    private static func text<T>(_ field: T) -> String {
        withUnsafeBytes(of: field) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
    }
}
