import KilnModel

/// A remote source's bytes as the shared result store keeps them, so that a fleet fetches each
/// remote source from its origin once, not once per host: the body, the version it is
/// (`identity`, `ETag`, `Last-Modified`) and when its writer last checked it with the origin.
public struct SharedOriginal: Sendable, Equatable {
    public var body: [UInt8]
    public var identity: SourceIdentity
    public var etag: String?
    public var lastModified: String?
    /// Wall clock, milliseconds since the epoch: when the origin last confirmed this version.
    public var checkedAt: Int64

    public init(body: [UInt8], identity: SourceIdentity, etag: String?, lastModified: String?, checkedAt: Int64) {
        self.body = body
        self.identity = identity
        self.etag = etag
        self.lastModified = lastModified
        self.checkedAt = checkedAt
    }
}

/// The originals part of the shared tier (`SharedCaching`): a store that keeps remote sources'
/// bytes for the fleet answers them here (KilnOrigins' `SharedResultStore`); by default a store
/// keeps none.
extension SharedCaching {
    public func original(sourcePath: String) -> SharedOriginal? { nil }
    public func enqueueOriginal(_ original: SharedOriginal, sourcePath: String) {}
}
