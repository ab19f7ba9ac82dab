import KilnModel
import KilnPipeline

/// `[source]`, the origins' part: the remote origins of `source.origins` (the first path segment
/// names one), fetched within the limits below. (`source.root` is the pipeline's:
/// `SourceConfiguration`.)
public struct OriginConfiguration: ConfigSection, Equatable {
    /// Remote sources by name; none by default (every path is a file under `root`).
    public var origins: [Origin] = Key.origins.defaultValue
    /// Special-purpose networks origins may nevertheless be in (the SSRF guard refuses them otherwise).
    public var allowedNetworks: [IPNetwork] = Key.allowedNetworks.defaultValue
    public var connectTimeout = Key.connectTimeout.defaultValue
    public var fetchTimeout = Key.fetchTimeout.defaultValue
    public var maxRedirects = Key.maxRedirects.defaultValue
    public var revalidateAfter = Key.revalidateAfter.defaultValue
    public var originConcurrency = Key.originConcurrency.defaultValue
    public var originRate = Key.originRate.defaultValue
    public var originBurst = Key.originBurst.defaultValue
    public var negativeTTL = Key.negativeTTL.defaultValue
    public var minSpeed = Key.minSpeed.defaultValue
    public var minSpeedTime = Key.minSpeedTime.defaultValue
    /// 0: `server.workers` − 1 (`fetchWorkers(workers:)`).
    public var fetchWorkersMax = Key.fetchWorkersMax.defaultValue

    /// The limits every origin's `OriginGate` enforces, with `workers` worker processes.
    public func originLimits(workers: Int) -> OriginGate.Limits {
        OriginGate.Limits(concurrency: originConcurrency, rate: Double(originRate), burst: originBurst,
                          fetchWorkers: fetchWorkers(workers: workers))
    }

    /// How many of `workers` processes may be in origin fetches at once: `source.fetch_workers_max`,
    /// by default all but one; 0 (no limit) with a single worker or a limit of at least `workers`.
    public func fetchWorkers(workers: Int) -> Int {
        let limit = fetchWorkersMax > 0 ? fetchWorkersMax : workers - 1
        return limit >= 1 && limit < workers ? limit : 0
    }

    /// S3 origins: the endpoint (empty: AWS's, from the region), the region, and where the
    /// credentials come from when `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY` are not set.
    public var s3Endpoint = Key.s3Endpoint.defaultValue
    public var s3Region = Key.s3Region.defaultValue
    public var s3CredentialsFile = Key.s3CredentialsFile.defaultValue
    public var s3Profile = Key.s3Profile.defaultValue

    /// Where S3 origins are fetched from: `source.s3_endpoint`, or AWS's regional endpoint.
    public var s3EndpointURL: String {
        s3Endpoint.isEmpty ? "https://s3.\(s3Region).amazonaws.com" : s3Endpoint
    }

    public enum Key {
        public static let origins = Setting<[Origin]>.custom(
            "source.origins", default: [], type: "origin list",
            expected: "name=http(s)://host[:port]/path or name=s3://bucket/prefix entries separated by commas, e.g. photos=https://img.example.com/originals/",
            doc: "remote sources: a URL path that starts with name/ is fetched from the origin's base URL (s3://: from the bucket, with signed GETs); none: local files only",
            parse: { Origin.parseList($0) }, format: { Origin.formatList($0) })
        public static let allowedNetworks = Setting<[IPNetwork]>.custom(
            "source.allowed_networks", default: [], type: "address list",
            expected: "addresses or CIDR networks separated by commas, e.g. 10.0.0.0/8, 127.0.0.1",
            doc: "loopback, private, link-local, CGNAT and other special addresses origins may be at (refused otherwise, after DNS and after each redirect)",
            parse: { $0.isEmpty ? [] : IPNetwork.parseList($0) }, format: { IPNetwork.formatList($0) })
        public static let connectTimeout = Setting.duration("source.connect_timeout", default: 2, in: 0.001...60,
                                                            doc: "connecting to an origin (per address tried)")
        public static let fetchTimeout = Setting.duration("source.fetch_timeout", default: 10, in: 0.001...600,
                                                          doc: "a whole fetch from an origin, redirects included")
        public static let maxRedirects = Setting.count("source.max_redirects", default: 3, in: 0...20,
                                                       doc: "redirects followed per fetch (each target checked again); s3:// origins follow none")
        public static let revalidateAfter = Setting.duration("source.revalidate_after", default: 60, in: 0...86_400,
                                                             doc: "how long a worker trusts what it learned of a remote source's version before asking the origin again (If-None-Match / If-Modified-Since)")
        public static let originConcurrency = Setting.count(
            "source.origin_concurrency", default: 8, in: 0...10_000,
            doc: "fetches from one origin at a time, across all workers (more wait, within source.fetch_timeout); 0: no limit")
        public static let originRate = Setting.count(
            "source.origin_rate", default: 0, in: 0...1_000_000,
            doc: "fetches from one origin per second, across all workers (a token bucket; more wait, within source.fetch_timeout); 0: no limit")
        public static let originBurst = Setting.count("source.origin_burst", default: 10, in: 1...1_000_000,
                                                      doc: "fetches source.origin_rate lets through at once after a quiet time")
        public static let negativeTTL = Setting.duration(
            "source.negative_ttl", default: 10, in: 0...3600,
            doc: "how long an origin's failure for a path (404, 5xx, time-out, refused, a body cut short) is remembered before asking again, by every worker sharing a disk cache (at most one resume of a kept partial download in that time); 0: never")
        public static let minSpeed = Setting.size(
            "source.min_speed", default: 32 * 1024, in: 0...(1 << 30),
            doc: "a fetch whose body arrives slower than this many bytes a second over source.min_speed_time (counted from the end of the origin's headers) is abandoned: 504, like a time-out; 0: no minimum")
        public static let minSpeedTime = Setting.duration(
            "source.min_speed_time", default: 2, in: 1...600,
            doc: "the window over which source.min_speed is measured (whole seconds, rounded up)")
        public static let fetchWorkersMax = Setting.count(
            "source.fetch_workers_max", default: 0, in: 0...256,
            doc: "worker processes that may be in origin fetches at once, so the others keep serving local sources while an origin is slow (a fetch that finds none free within 250 ms is a 503 with Retry-After); 0: all but one (server.workers − 1); at least server.workers: no limit")
        public static let s3Endpoint = Setting<String>.custom(
            "source.s3_endpoint", default: "", type: "string", expected: "empty, or http(s)://host[:port] (e.g. http://127.0.0.1:9000)",
            doc: "where s3:// origins are read, path-style (endpoint/bucket/key); empty: AWS, https://s3.<region>.amazonaws.com",
            parse: { Origin.normalizedEndpoint($0) }, format: { $0 })
        public static let s3Region = Setting.text("source.s3_region", default: "us-east-1", expected: "an AWS region name, e.g. eu-west-1",
                                                  doc: "the region s3:// requests are signed for (and AWS's endpoint)",
                                                  check: { !$0.isEmpty && $0.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2d } })
        public static let s3CredentialsFile = Setting.text(
            "source.s3_credentials_file", default: "", expected: "a file path, or empty",
            doc: "an AWS shared credentials file (INI, like ~/.aws/credentials) for s3:// origins, read when AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set; empty: the environment only")
        public static let s3Profile = Setting.text("source.s3_profile", default: "default", expected: "a profile name",
                                                   doc: "the section of source.s3_credentials_file to use",
                                                   check: { !$0.isEmpty && !$0.contains("]") })
    }

    public static let fields: [ConfigField<Self>] = [
        ConfigField(Key.origins) { $0.origins = $1 },
        ConfigField(Key.allowedNetworks) { $0.allowedNetworks = $1 },
        ConfigField(Key.connectTimeout) { $0.connectTimeout = $1 },
        ConfigField(Key.fetchTimeout) { $0.fetchTimeout = $1 },
        ConfigField(Key.maxRedirects) { $0.maxRedirects = $1 },
        ConfigField(Key.revalidateAfter) { $0.revalidateAfter = $1 },
        ConfigField(Key.originConcurrency) { $0.originConcurrency = $1 },
        ConfigField(Key.originRate) { $0.originRate = $1 },
        ConfigField(Key.originBurst) { $0.originBurst = $1 },
        ConfigField(Key.negativeTTL) { $0.negativeTTL = $1 },
        ConfigField(Key.minSpeed) { $0.minSpeed = $1 },
        ConfigField(Key.minSpeedTime) { $0.minSpeedTime = $1 },
        ConfigField(Key.fetchWorkersMax) { $0.fetchWorkersMax = $1 },
        ConfigField(Key.s3Endpoint) { $0.s3Endpoint = $1 },
        ConfigField(Key.s3Region) { $0.s3Region = $1 },
        ConfigField(Key.s3CredentialsFile) { $0.s3CredentialsFile = $1 },
        ConfigField(Key.s3Profile) { $0.s3Profile = $1 },
    ]

    public init() {}
}
