import KilnModel

/// A render failure that belongs to the source rather than to the variant asked for (issue 25):
/// its bytes are not an image, are damaged, are over a limit before any option counts (the file
/// size, `limits.max_pixels`, a decode that no variant could afford), or its decode ran into the
/// render deadline. Every variant of the same source version would fail the same way, so
/// `RenderCoordinator` remembers it once for the source (`CacheKey.sourceFailures`), and the
/// next request for any size of that source is answered from the memory at once.
///
/// The pipeline wraps such errors while it renders through the caches (`ImagePipeline.image(for:)`);
/// `PipelineFailure.init(_:)` unwraps them, so the answer is the same as the unwrapped error's.
/// Failures that depend on the options (a result too large for its format, a bad option, a
/// budget the variant alone exceeds) are never wrapped and stay per variant.
public struct SourceFault: Error {
    public let underlying: any Error

    public init(_ underlying: any Error) {
        self.underlying = underlying
    }
}

extension CacheKey {
    /// A key that names a source version rather than a rendered result: the source path and its
    /// identity (size, mtime, inode and the ETag of remote sources, `SourceIdentity.canonical`),
    /// under an output token (`purpose`) that no rendered result has, so the two kinds never
    /// collide whatever the request. A changed source (new mtime, new ETag) has a new key.
    static func ofSource(_ purpose: String, sourcePath: String, identity: SourceIdentity) -> CacheKey {
        CacheKey(canonicalRequest: purpose + "/" + sourcePath, outputFormat: purpose, source: identity,
                 sourcePath: sourcePath)
    }

    /// The key under which failures of the source itself are remembered (a negative entry shared
    /// by every worker through the disk cache, for `cache.negative_ttl`), and which names the
    /// marker of a decode in progress (`RenderCoordinator.decoding`).
    public static func sourceFailures(sourcePath: String, identity: SourceIdentity) -> CacheKey {
        ofSource("source-failure", sourcePath: sourcePath, identity: identity)
    }
}
