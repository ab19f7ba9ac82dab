import KilnModel

/// `[cache]`, the shared result store's part: a second-level cache on an S3-compatible object store
/// that every host of a fleet reads before rendering and writes after (`SharedResultStore`).
/// The endpoint's region and credentials are those of S3 origins (`source.s3_region`, the
/// environment's `AWS_*` or `source.s3_credentials_file`), and the SSRF guard
/// (`source.allowed_networks`) applies to the endpoint.
public struct SharedStoreConfiguration: ConfigSection, Equatable {
    /// `s3://bucket/prefix/` (normalized: ends with `/`); empty: no shared store.
    public var url = Key.url.defaultValue
    /// `http(s)://host[:port]`; empty: `source.s3_endpoint` (or AWS's).
    public var endpoint = Key.endpoint.defaultValue
    /// Seconds a lookup may take, connection included.
    public var timeout: Double = Key.timeout.defaultValue
    /// Seconds one write may take, after the response.
    public var writeTimeout: Double = Key.writeTimeout.defaultValue
    /// Results larger than this are not written (nor accepted on read).
    public var maxBytes = Key.maxBytes.defaultValue
    /// After a failure, seconds the store is not asked again (and the most one warning a process
    /// logs per kind of trouble).
    public var retryAfter: Double = Key.retryAfter.defaultValue
    /// The fleet's secret that signs every object (`ObjectSigner`); empty: objects are checked
    /// for corruption only.
    public var secret = Key.secret.defaultValue

    public enum Key {
        public static let url = Setting<String>.custom(
            "cache.shared", default: "", type: "string", expected: "empty, or s3://bucket/prefix/ (a prefix is optional)",
            doc: "a second-level cache shared by every host: results are read from this S3 bucket and prefix after a miss in memory and on disk, and written there after a render (after the answer); endpoint, region and credentials as for s3:// origins; empty: none",
            parse: { raw in raw.isEmpty ? "" : raw.lowercased().hasPrefix(Origin.s3Scheme) ? Origin.normalizedS3Base(raw) : nil },
            format: { $0 })
        public static let endpoint = Setting<String>.custom(
            "cache.shared_endpoint", default: "", type: "string", expected: "empty, or http(s)://host[:port] (e.g. http://127.0.0.1:8333)",
            doc: "where the shared result store is, path-style (endpoint/bucket/key); empty: source.s3_endpoint",
            parse: { Origin.normalizedEndpoint($0) }, format: { $0 })
        public static let timeout = Setting.duration(
            "cache.shared_timeout", default: 0.3, in: 0.01...60,
            doc: "a lookup in the shared store (connecting included); past it the request renders locally")
        public static let writeTimeout = Setting.duration(
            "cache.shared_write_timeout", default: 2, in: 0.01...600,
            doc: "one write to the shared store, made after the answer was sent")
        public static let maxBytes = Setting.size(
            "cache.shared_max_bytes", default: 16 << 20, in: 1024...(1 << 30),
            doc: "larger results are not written to the shared store")
        public static let retryAfter = Setting.duration(
            "cache.shared_retry_after", default: 10, in: 0...3600,
            doc: "after a failure of the shared store (an error, a time-out), how long each worker caches locally only without asking it (one warning per interval)")
        public static let secret = Setting<String>.custom(
            "cache.shared_secret", default: "", type: "string", expected: "empty, or a secret of at least 32 characters",
            doc: "signs every object written to the shared store (an HMAC-SHA256 in its metadata) and refuses to serve any object "
                + "without this signature, so write access to the bucket alone cannot put bytes in front of clients; the same on every "
                + "host (KILN_CACHE_SHARED_SECRET keeps it out of files); empty: objects are checked for corruption only",
            parse: { $0.isEmpty || $0.utf8.count >= 32 ? $0 : nil }, format: { $0 }).secret()
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.url) { $0.url = $1 },
        ConfigField(Key.endpoint) { $0.endpoint = $1 },
        ConfigField(Key.timeout) { $0.timeout = $1 },
        ConfigField(Key.writeTimeout) { $0.writeTimeout = $1 },
        ConfigField(Key.maxBytes) { $0.maxBytes = $1 },
        ConfigField(Key.retryAfter) { $0.retryAfter = $1 },
        ConfigField(Key.secret) { $0.secret = $1 },
    ]

    public init() {}

    /// Whether a shared store is configured.
    public var isEnabled: Bool { !url.isEmpty }

    /// The bucket of `url` (empty when none).
    public var bucket: String {
        String(url.dropFirst(Origin.s3Scheme.count).prefix { $0 != "/" })
    }

    /// The key prefix of `url`: empty, or ending with `/` (`s3://bucket/kiln/results/` → `kiln/results/`).
    public var prefix: String {
        guard isEnabled else { return "" }
        return String(url.dropFirst(Origin.s3Scheme.count + bucket.count + 1))
    }

    /// Where the store is: `cache.shared_endpoint`, or `source.s3_endpoint` (or AWS's, from the region).
    public func endpointURL(origins: OriginConfiguration) -> String {
        endpoint.isEmpty ? origins.s3EndpointURL : endpoint
    }
}
