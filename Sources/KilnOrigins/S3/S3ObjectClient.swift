import KilnPOSIX

/// An S3 bucket (or an S3-compatible store: SeaweedFS, MinIO, Ceph RGW...) as an `ObjectStoring`:
/// SigV4-signed GET, PUT, DELETE and ListObjectsV2 calls, path-style
/// (`<endpoint>/<bucket>/<key>`), through `HTTPFetcher` (libcurl), so the store's calls are bounded
/// in time and size like an origin's fetch and every connection's address passes the SSRF guard
/// (`policy`). No redirect is followed (a signed request is for one host).
///
/// Status codes become `ObjectStoreError`s: 404 is "no such object", 5xx and transport failures
/// (refused connection, time-out) are `.unavailable`, any other answer is `.refused` with S3's
/// error `<Code>`, and so is an address the guard refuses. Checked against SeaweedFS 4.48
/// (`weed server -s3`): PUT with metadata, GET, a missing key, list, DELETE, a wrong secret (403
/// `SignatureDoesNotMatch`), a closed port, a loopback endpoint outside `source.allowed_networks`.
public struct S3ObjectClient: ObjectStoring {
    /// `http(s)://host[:port]`, maybe a path, no trailing `/`.
    public let endpoint: String
    public let bucket: String
    public let signer: S3RequestSigner
    public let fetcher: HTTPFetcher
    public let policy: OriginAddressPolicy
    /// Seconds since the epoch, for the signatures (tests fix it).
    let clock: @Sendable () -> Int64

    public init(endpoint: String, bucket: String, signer: S3RequestSigner, fetcher: HTTPFetcher,
                policy: OriginAddressPolicy, clock: @escaping @Sendable () -> Int64 = { WallClock.seconds() }) {
        var base = endpoint
        while base.hasSuffix("/") { base.removeLast() }
        self.endpoint = base
        self.bucket = bucket
        var fetcher = fetcher
        fetcher.maxRedirects = 0
        self.fetcher = fetcher
        self.signer = signer
        self.policy = policy
        self.clock = clock
    }

    /// The URL of `key` (encoded as SigV4 signs it).
    public func url(for key: String) -> String {
        "\(endpoint)/\(bucket)/" + S3RequestSigner.encodePath(key)
    }

    public func get(_ key: String) throws(ObjectStoreError) -> StoredObject? {
        let response = try call("GET", url(for: key))
        switch response.status {
        case 200:
            return StoredObject(body: response.body, contentType: response.contentType ?? "application/octet-stream",
                                metadata: response.metadata)
        case 404: return nil
        default: throw failure(response, "GET", key)
        }
    }

    public func put(_ key: String, body: [UInt8], contentType: String, metadata: [String: String]) throws(ObjectStoreError) {
        var headers: [(name: String, value: String)] = [("Content-Type", contentType)]
        for (name, value) in metadata.sorted(by: { $0.key < $1.key }) { headers.append(("x-amz-meta-" + name, value)) }
        let response = try call("PUT", url(for: key), headers: headers, body: body)
        guard response.status == 200 || response.status == 201 || response.status == 204 else {
            throw failure(response, "PUT", key)
        }
    }

    public func list(prefix: String) throws(ObjectStoreError) -> [String] {
        var keys: [String] = []
        var token: String?
        // A page holds up to 1,000 keys; 10,000 pages is far beyond one source's variants.
        for _ in 0..<10_000 {
            var query: [(name: String, value: String)] = [("list-type", "2"), ("prefix", prefix)]
            if let token { query.append(("continuation-token", token)) }
            let response = try call("GET", "\(endpoint)/\(bucket)", query: query)
            guard response.status == 200 else { throw failure(response, "list", prefix) }
            let page = S3ListPage(xml: response.body)
            keys += page.keys
            guard page.truncated, let next = page.nextToken, !next.isEmpty else { return keys }
            token = next
        }
        return keys
    }

    @discardableResult
    public func delete(_ keys: [String]) throws(ObjectStoreError) -> Int {
        var removed = 0
        for key in keys {
            let response = try call("DELETE", url(for: key))
            switch response.status {
            case 200, 202, 204: removed += 1
            case 404: break
            default: throw failure(response, "DELETE", key)
            }
        }
        return removed
    }

    /// One signed call; transport failures are `.unavailable`.
    func call(_ method: String, _ url: String, query: [(name: String, value: String)] = [],
              headers: [(name: String, value: String)] = [], body: [UInt8] = []) throws(ObjectStoreError) -> HTTPFetcher.Response {
        let payload = body.isEmpty ? S3RequestSigner.emptyPayloadHash : S3RequestSigner.payloadHash(body)
        guard let signed = signer.headers(method: method, url: url, query: query, payloadHash: payload,
                                          at: clock(), signing: headers) else {
            throw .refused("cannot sign a request to \(url)")
        }
        let full = query.isEmpty ? url : url + "?" + S3RequestSigner.canonicalQuery(query)
        do throws(HTTPFetcher.Failure) {
            return try fetcher.send(method, full, headers: headers + signed, body: body,
                                    checkAddress: { [policy] in policy.refusal(for: $0) })
        } catch {
            // The SSRF guard's refusal is the configuration's, not the store's health.
            if case .refused(let why) = error { throw .refused("\(url): \(why) (source.allowed_networks)") }
            throw .unavailable(S3ObjectClient.describe(error))
        }
    }

    func failure(_ response: HTTPFetcher.Response, _ what: String, _ key: String) -> ObjectStoreError {
        let code = S3Access.errorCode(in: response.body).map { " (\($0))" } ?? ""
        let text = "\(what) \(bucket)/\(key): HTTP \(response.status)\(code)"
        return response.status >= 500 ? .unavailable(text) : .refused(text)
    }

    static func describe(_ error: HTTPFetcher.Failure) -> String {
        switch error {
        case .unavailable(let m), .refused(let m), .tooLarge(let m), .timeout(let m), .redirects(let m),
             .transport(let m), .notStarted(let m), .busy(let m): m
        case .interrupted(_, let reason, _): reason
        }
    }
}

/// One page of a ListObjectsV2 answer: its `<Key>`s (XML entities decoded), whether more pages
/// follow and the token of the next.
struct S3ListPage: Equatable {
    var keys: [String] = []
    var truncated = false
    var nextToken: String?

    init(xml bytes: [UInt8]) {
        let text = String(decoding: bytes, as: UTF8.self)
        keys = S3ListPage.values(of: "Key", in: text)
        truncated = S3ListPage.values(of: "IsTruncated", in: text).first == "true"
        nextToken = S3ListPage.values(of: "NextContinuationToken", in: text).first
    }

    static func values(of element: String, in text: String) -> [String] {
        var out: [String] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "<\(element)>") {
            guard let close = rest[open.upperBound...].firstRange(of: "</\(element)>") else { break }
            out.append(unescaped(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return out
    }

    /// The five predefined XML entities decoded (S3 escapes nothing else in keys).
    static func unescaped(_ s: Substring) -> String {
        guard s.contains("&") else { return String(s) }
        let entities: [(String, Character)] = [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&apos;", "'"), ("&amp;", "&")]
        var out = ""
        var rest = s
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let tail = rest[amp...]
            if let (entity, char) = entities.first(where: { tail.hasPrefix($0.0) }) {
                out.append(char)
                rest = tail.dropFirst(entity.count)
            } else {
                out.append("&")
                rest = tail.dropFirst()
            }
        }
        return out + rest
    }
}
