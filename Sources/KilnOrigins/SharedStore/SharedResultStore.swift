import KilnModel
import KilnPipeline
import KilnPOSIX
import Logging

/// The shared result store (`cache.shared = "s3://bucket/prefix/"`): a second-level cache on an
/// S3-compatible object store that every host of a fleet reads before rendering and writes after
/// (`SharedCaching`, asked by `RenderCoordinator`).
///
/// Objects are grouped by source: `<prefix><SourceTag.hex>/<CacheKey.sharedHex>`, both parts hex
/// digits, so whatever a source path holds (`..`, `%2F`, newlines) a key stays under the prefix,
/// and one listing finds every variant of a source (`purge(sourcePath:)`). The object's metadata
/// carry what an answer needs (`SharedEntryCodec`); every read is verified and a mismatch is
/// discarded (an error in the metrics, a warning at most once per interval), never served: the
/// render then overwrites it.
///
/// Fail-open: a lookup is bounded by `cache.shared_timeout` (the reading client's time-out), a
/// write by `cache.shared_write_timeout`; any failure makes the breaker (`StoreBreaker`) skip the
/// store for `cache.shared_retry_after`, during which lookups and writes are `.skipped` (and
/// writes until a lookup succeeded again: a lookup's short time-out probes the store). Writes
/// happen only in `flush()`, after the response; results over `cache.shared_max_bytes` are skipped.
///
/// Expiry is the store's business (lifecycle rules on the prefix): Kiln never lists to evict.
/// One per worker process, not thread-safe.
public final class SharedResultStore: SharedCaching {
    /// Reads, bounded by `cache.shared_timeout`.
    let reader: any ObjectStoring
    /// Writes, listings and deletions, bounded by `cache.shared_write_timeout`.
    let writer: any ObjectStoring
    /// The key prefix: empty or ending with `/`.
    public let prefix: String
    public let maxBytes: Int
    /// Signs what is written and refuses what is read unsigned (`cache.shared_secret`); nil: none.
    public let signer: ObjectSigner?
    let breaker: StoreBreaker
    /// Results rendered since the last flush (at most `pendingLimit`).
    private var pending: [(key: CacheKey, image: CachedImage)] = []
    static let pendingLimit = 16
    /// The remote original downloaded since the last flush (`SharedResultStore+Originals.swift`).
    var pendingOriginals: [(sourcePath: String, original: SharedOriginal)] = []

    /// - Parameters:
    ///   - reader: the store as lookups see it (short time-out); `writer` (default: the same) for
    ///     writes, listings and deletions.
    ///   - prefix: empty, or ending with `/`.
    ///   - signer: the fleet's secret (`cache.shared_secret`), or nil.
    ///   - now: monotonic seconds (the breaker's clock).
    public init(reader: any ObjectStoring, writer: (any ObjectStoring)? = nil, prefix: String, maxBytes: Int,
                retryAfter: Double, signer: ObjectSigner? = nil, logger: Logger, now: @escaping () -> Double = MonotonicClock.seconds) {
        self.reader = reader
        self.writer = writer ?? reader
        self.prefix = prefix
        self.maxBytes = maxBytes
        self.signer = signer
        breaker = StoreBreaker(retryAfter: retryAfter, logger: logger, now: now)
    }

    /// The prefix every variant of `sourcePath` is stored under: `<prefix><SourceTag.hex>/`.
    public func sourcePrefix(_ sourcePath: String) -> String {
        prefix + SourceTag(sourcePath: sourcePath).hex + "/"
    }

    /// The object key of `key`: `<prefix><SourceTag.hex>/<CacheKey.sharedHex>`.
    public func objectKey(for key: CacheKey) -> String {
        sourcePrefix(key.sourcePath) + key.sharedHex
    }

    public func lookUp(_ key: CacheKey) -> SharedLookup {
        guard breaker.isClosed else { return .skipped }
        let object: StoredObject?
        do {
            object = try reader.get(objectKey(for: key))
        } catch {
            breaker.failed("a lookup", error.message)
            return .failed(error.message)
        }
        breaker.succeeded()
        guard let object else { return .miss }
        if let refusal = signer?.refusal(objectKey: objectKey(for: key), metadata: object.metadata) {
            return discarded(key, refusal)
        }
        switch SharedEntryCodec.decode(object, for: key) {
        case .success(let image):
            return .hit(image)
        case .failure(let refusal):
            return discarded(key, refusal.reason)
        }
    }

    /// A lookup's object that must not be served: warned about (once per interval), never served.
    private func discarded(_ key: CacheKey, _ why: String) -> SharedLookup {
        let reason = "discarded \(objectKey(for: key)) (\(key.sourcePath)): \(why)"
        breaker.warn("discarded", "shared result store (cache.shared): \(reason); rendering it again")
        return .failed(reason)
    }

    public func enqueue(_ image: CachedImage, for key: CacheKey) {
        guard pending.count < SharedResultStore.pendingLimit else { return }
        pending.append((key, image))
    }

    public func flush() -> [SharedWrite] {
        let entries = pending
        pending.removeAll()
        return flushOriginals() + entries.map { write($0.image, for: $0.key) }
    }

    private func write(_ image: CachedImage, for key: CacheKey) -> SharedWrite {
        guard image.data.count <= maxBytes, breaker.writable else { return .skipped }
        let (body, contentType, metadata) = SharedEntryCodec.encode(image, for: key)
        let name = objectKey(for: key)
        do throws(ObjectStoreError) {
            try writer.put(name, body: body, contentType: contentType, metadata: signer?.signed(objectKey: name, metadata: metadata) ?? metadata)
            return .written(body.count)
        } catch {
            breaker.failed("a write", error.message)
            return .failed(error.message)
        }
    }

    /// Removes every stored variant of `sourcePath` (lists `<prefix><SourceTag.hex>/`, deletes
    /// what it found); how many objects were removed. Not subject to the breaker: it is asked for.
    public func purge(sourcePath: String) throws(ObjectStoreError) -> Int {
        let under = sourcePrefix(sourcePath)
        let keys = try writer.list(prefix: under).filter { $0.hasPrefix(under) }
        guard !keys.isEmpty else { return 0 }
        return try writer.delete(keys)
    }
}

/// The shared result store a configuration names (`cache.shared*`, with the S3 settings of
/// `[source]`): built by each worker, and by the master when it checks the settings.
extension SharedResultStore {
    /// The store of `shared`, nil when `cache.shared` is empty. Two clients of the endpoint: one
    /// for lookups (`cache.shared_timeout`, connection included), one for writes, listings and
    /// deletions (`cache.shared_write_timeout`); both sign with the credentials of S3 origins and
    /// connect only to addresses `source.allowed_networks` lets through (the SSRF guard), and
    /// follow no redirect. Throws a `ConfigError` naming `cache.shared` when there are no credentials.
    public static func make(_ shared: SharedStoreConfiguration, origins: OriginConfiguration, logger: Logger,
                            environment: (String) -> String? = S3Access.processVariable) throws(ConfigError) -> SharedResultStore? {
        guard shared.isEnabled else { return nil }
        let signer = S3RequestSigner(credentials: try credentials(shared, origins, environment), region: origins.s3Region)
        let policy = OriginAddressPolicy(allowedNetworks: origins.allowedNetworks)
        let endpoint = shared.endpointURL(origins: origins)
        // A listing page (1,000 keys) must fit whatever the result limit.
        let bodyLimit = max(shared.maxBytes, 16 << 20)
        func client(connect: Double, timeout: Double) -> any ObjectStoring {
            S3ObjectClient(endpoint: endpoint, bucket: shared.bucket, signer: signer,
                           fetcher: HTTPFetcher(connectTimeout: connect, timeout: timeout, maxRedirects: 0, maxBytes: bodyLimit),
                           policy: policy)
        }
        return SharedResultStore(reader: client(connect: shared.timeout, timeout: shared.timeout),
                                 writer: client(connect: min(shared.timeout * 4, shared.writeTimeout), timeout: shared.writeTimeout),
                                 prefix: shared.prefix, maxBytes: shared.maxBytes, retryAfter: shared.retryAfter,
                                 signer: shared.secret.isEmpty ? nil : ObjectSigner(secret: shared.secret), logger: logger)
    }

    /// The credentials of S3 origins (the environment, or `source.s3_credentials_file`), with a
    /// message about `cache.shared` when there are none.
    static func credentials(_ shared: SharedStoreConfiguration, _ origins: OriginConfiguration,
                            _ environment: (String) -> String?) throws(ConfigError) -> S3Credentials {
        if S3Credentials.fromEnvironment(environment) == nil && origins.s3CredentialsFile.isEmpty {
            throw .unavailable("\(SharedStoreConfiguration.Key.url.key) = \(shared.url) but there are no S3 credentials: set AWS_ACCESS_KEY_ID and "
                + "AWS_SECRET_ACCESS_KEY in kiln's environment, or \(OriginConfiguration.Key.s3CredentialsFile.key)")
        }
        return try S3Access.credentials(for: origins, environment: environment)
    }
}
