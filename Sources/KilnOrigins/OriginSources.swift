import KilnModel
import KilnPipeline
import KilnPOSIX

/// The origins layer's part of the pipeline (`SourceStageBuilding`): the remote origins of
/// `source.origins` beside the local folder (`SourceRouter`), their fetches recorded in an
/// `OriginTraffic`, and with a disk cache one fetch per source for every worker sharing it
/// (`SharedOriginSource`). The composition root sets it as `PipelineConfiguration.sources` when
/// origins are configured.
public struct OriginSources: SourceStageBuilding {
    public var configuration: OriginConfiguration
    /// `limits.max_file_bytes`: the largest body a fetch accepts.
    public var maxFileBytes: Int
    /// The file the workers share origin limits through (the master's, on fd 5 of each worker);
    /// nil: each process keeps its own (`kiln process`, `kiln warm`, tests).
    public var sharedState: RecordLockFile?
    /// `server.workers`: how many processes share the origins (`source.fetch_workers_max`).
    public var workers: Int

    public init(_ configuration: OriginConfiguration, maxFileBytes: Int, sharedState: RecordLockFile? = nil, workers: Int = 1) {
        self.configuration = configuration
        self.maxFileBytes = maxFileBytes
        self.sharedState = sharedState
        self.workers = workers
    }

    /// `local` alone, or a `SourceRouter` over it and the remote origins of `source.origins`,
    /// which record their fetches in an `OriginTraffic` and end them before `renderTimeout`. S3
    /// origins are addressed at `source.s3_endpoint` and sign their GETs (`S3Access`: throws when
    /// there are no credentials).
    public func sourceStage(local: any SourceLoading, renderTimeout: Double) throws(ConfigError) -> BuiltSourceStage {
        let source = configuration
        guard !source.origins.isEmpty else { return BuiltSourceStage(source: local) }
        let traffic = OriginTraffic()
        let fetcher = HTTPFetcher(connectTimeout: source.connectTimeout, timeout: source.fetchTimeout,
                                  maxRedirects: source.maxRedirects, maxBytes: maxFileBytes,
                                  minSpeed: source.minSpeed, minSpeedTime: source.minSpeedTime)
        let policy = OriginAddressPolicy(allowedNetworks: source.allowedNetworks)
        let limits = source.originLimits(workers: workers)
        let state = limits.isUnlimited ? nil : (sharedState ?? RecordLockFile.anonymous())
        let signer = source.origins.contains { $0.kind == .s3 } ? try S3Access.signer(for: source) : nil
        // A signed request is for one host: S3 origins follow no redirect (its headers, the
        // session token among them, would go along; the signature would not match there anyway).
        var s3Fetcher = fetcher
        s3Fetcher.maxRedirects = 0
        let remotes = source.origins.enumerated().map { index, origin in
            let isS3 = origin.kind == .s3
            return RemoteSource(origin: isS3 ? origin.addressed(at: source.s3EndpointURL) : origin,
                                fetcher: isS3 ? s3Fetcher : fetcher, policy: policy, revalidateAfter: source.revalidateAfter,
                                gate: state.map { OriginGate(file: $0, index: index, limits: limits) },
                                traffic: traffic, negativeTTL: source.negativeTTL, renderTimeout: renderTimeout,
                                signer: isS3 ? signer : nil)
        }
        let router = SourceRouter(local: local, remotes: remotes)
        return BuiltSourceStage(source: router, activity: traffic, sharing: OriginSharing(router: router))
    }
}

/// The sharing of a `SourceRouter` with origins (`SourceSharing`): its remote sources become a
/// `SharedOriginSource`, one fetch per source for all workers, resumable downloads. It needs the
/// originals on disk, so it keeps them even with `cache.store = final`; local paths go through
/// `keepLocal`. With a shared result store (`cache.shared`), remote originals are kept there too:
/// one origin fetch per fleet.
struct OriginSharing: SourceSharing {
    let router: SourceRouter

    func sharing(keepLocal: (any SourceLoading) -> any SourceLoading, disk: DiskCache, lockTimeout: Double,
                 shared: (any SharedCaching)?) -> any SourceLoading {
        SharedOriginSource(router: router, local: keepLocal(router.local), disk: disk, lockTimeout: lockTimeout, store: shared)
    }
}
