import Crypto
import KilnModel
import KilnPOSIX

/// AWS Signature Version 4 for S3 requests (the `Authorization` header, "AWS4-HMAC-SHA256"): the
/// GETs of S3 origins, and the shared result store's GET, PUT, DELETE and list calls.
///
/// 1. the canonical request: method, the URL's path as sent (already URI-encoded: S3 paths are
///    not normalized nor encoded twice), the canonical query (`canonicalQuery`: pairs sorted by
///    name, both URI-encoded), the signed headers `name:value` sorted by lower-case name, their
///    names joined by `;`, and the payload hash (the body's SHA-256 in hex);
/// 2. the string to sign: `AWS4-HMAC-SHA256`, the `x-amz-date`, the scope
///    `YYYYMMDD/region/s3/aws4_request` and the canonical request's SHA-256 in hex;
/// 3. the signing key `HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request")`,
///    and the signature: the string to sign's HMAC with it, in hex.
///
/// Signed: `host` (as curl sends it: `host[:port]`, without a scheme's default port),
/// `x-amz-content-sha256`, `x-amz-date`, `x-amz-security-token` with temporary credentials, and
/// whatever headers the caller asks to sign. Others (`If-None-Match`) may be added unsigned.
public struct S3RequestSigner: Sendable, Equatable {
    public var credentials: S3Credentials
    public var region: String
    public var service: String

    /// SHA-256 of an empty body, the payload hash of every GET signed here.
    public static let emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    public init(credentials: S3Credentials, region: String, service: String = "s3") {
        self.credentials = credentials
        self.region = region
        self.service = service
    }

    /// The headers to send with a GET of `url` at `time` (seconds since the epoch): `x-amz-date`,
    /// `x-amz-content-sha256`, maybe `x-amz-security-token`, and `Authorization`, which also covers
    /// `signing` (headers the caller sends too, e.g. `Range`). Nil when `url` is not
    /// `http(s)://host[:port]/path` without a query or fragment.
    public func headers(get url: String, at time: Int64,
                        signing: [(name: String, value: String)] = []) -> [(name: String, value: String)]? {
        headers(method: "GET", url: url, at: time, signing: signing)
    }

    /// The headers to send with `method` to `url` (without a query: the query's pairs are
    /// `query`, unencoded, and the caller appends `canonicalQuery(query)` to the URL it sends),
    /// with a body whose SHA-256 is `payloadHash`. `signing` are headers the caller sends too and
    /// wants covered (`Content-Type`, `x-amz-meta-*`). Nil when `url` cannot be signed.
    public func headers(method: String, url: String, query: [(name: String, value: String)] = [],
                        payloadHash: String = S3RequestSigner.emptyPayloadHash, at time: Int64,
                        signing: [(name: String, value: String)] = []) -> [(name: String, value: String)]? {
        guard let target = S3RequestSigner.target(of: url) else { return nil }
        let date = S3RequestSigner.amzDate(time)
        var added: [(name: String, value: String)] = [("x-amz-content-sha256", payloadHash), ("x-amz-date", date)]
        if let token = credentials.sessionToken { added.append(("x-amz-security-token", token)) }
        let signed = [("host", target.host)] + signing + added
        let (canonical, names) = S3RequestSigner.canonicalRequest(method: method, path: target.path,
                                                                  query: S3RequestSigner.canonicalQuery(query),
                                                                  headers: signed, payloadHash: payloadHash)
        let day = String(date.prefix(8))
        let scope = "\(day)/\(region)/\(service)/aws4_request"
        let toSign = S3RequestSigner.stringToSign(canonicalRequest: canonical, amzDate: date, scope: scope)
        let key = S3RequestSigner.signingKey(secret: credentials.secretAccessKey, day: day, region: region, service: service)
        let signature = S3RequestSigner.hex(S3RequestSigner.hmac(key, toSign))
        added.append(("Authorization",
                      "AWS4-HMAC-SHA256 Credential=\(credentials.accessKeyID)/\(scope),SignedHeaders=\(names),Signature=\(signature)"))
        return added
    }

    /// The canonical request and its signed header names (`host;range;x-amz-date`). `path` is used
    /// as given (encode it with `encodePath` first), and so is `query` (`canonicalQuery`).
    public static func canonicalRequest(method: String, path: String, query: String = "", headers: [(name: String, value: String)],
                                        payloadHash: String) -> (request: String, signedHeaders: String) {
        let canonical = headers.map { (name: $0.name.lowercased(), value: collapsedSpaces($0.value)) }
            .sorted { $0.name < $1.name }
        let names = canonical.map(\.name).joined(separator: ";")
        let lines = canonical.map { "\($0.name):\($0.value)\n" }.joined()
        return ([method, path.isEmpty ? "/" : path, query, lines, names, payloadHash].joined(separator: "\n"), names)
    }

    /// SigV4's canonical query string: each name and value URI-encoded (every byte but
    /// `A-Z a-z 0-9 - . _ ~`, `/` included), `name=value` pairs sorted by name, then value, joined
    /// by `&`; also what the request's URL carries after `?`.
    public static func canonicalQuery(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { (encode($0.name, slash: true), encode($0.value, slash: true)) }
            .sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }
            .map { "\($0.0)=\($0.1)" }.joined(separator: "&")
    }

    /// The SHA-256 of `body` in hex (a PUT's payload hash).
    public static func payloadHash(_ body: [UInt8]) -> String { hex(Array(SHA256.hash(data: body))) }

    public static func stringToSign(canonicalRequest: String, amzDate: String, scope: String) -> String {
        ["AWS4-HMAC-SHA256", amzDate, scope, hex(Array(SHA256.hash(data: Array(canonicalRequest.utf8))))]
            .joined(separator: "\n")
    }

    /// The key of one day (`YYYYMMDD`), region and service.
    public static func signingKey(secret: String, day: String, region: String, service: String) -> [UInt8] {
        let dateKey = hmac(Array("AWS4\(secret)".utf8), day)
        return hmac(hmac(hmac(dateKey, region), service), "aws4_request")
    }

    /// `YYYYMMDD'T'HHMMSS'Z'` in UTC.
    public static func amzDate(_ seconds: Int64) -> String {
        let t = CivilTime(millisecondsSinceEpoch: seconds * 1000)
        let two = { CivilTime.pad($0, 2) }
        return "\(CivilTime.pad(t.year, 4))\(two(t.month))\(two(t.day))T\(two(t.hour))\(two(t.minute))\(two(t.second))Z"
    }

    /// SigV4's URI encoding of an object key: every byte but `A-Z a-z 0-9 - . _ ~` (and `/`, which
    /// separates segments) as `%XX` in upper-case hex.
    public static func encodePath(_ key: some StringProtocol) -> String { encode(key, slash: false) }

    /// `%XX` for every byte but the unreserved ones, and `/` unless `slash` (query parts encode it).
    static func encode(_ key: some StringProtocol, slash: Bool) -> String {
        PercentEncoding.encode(key, keeping: slash ? .unreserved : .unreservedAndSlash)
    }

    /// The `Host` header curl sends for `url` and the path; nil for a URL this signer cannot sign.
    static func target(of url: String) -> (host: String, path: String)? {
        let lower = url.lowercased()
        let defaultPort: String
        if lower.hasPrefix("http://") { defaultPort = ":80" } else if lower.hasPrefix("https://") { defaultPort = ":443" } else { return nil }
        let rest = url.drop { $0 != "/" }.dropFirst(2)
        var host = String(rest.prefix { $0 != "/" })
        let path = String(rest.dropFirst(host.count))
        guard !host.isEmpty, !url.contains("?"), !url.contains("#") else { return nil }
        if host.hasSuffix(defaultPort) { host.removeLast(defaultPort.count) }
        return (host, path.isEmpty ? "/" : path)
    }

    static func collapsedSpaces(_ value: String) -> String {
        value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    static func hmac(_ key: [UInt8], _ text: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: SymmetricKey(data: key)))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        Hex.lowercase(bytes)
    }
}
