import KilnModel
import Logging

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
                                 prefix: shared.prefix, maxBytes: shared.maxBytes, retryAfter: shared.retryAfter, logger: logger)
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
