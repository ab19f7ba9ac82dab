/// The identity of a source version: changes whenever the file changes. Part of cache keys.
public struct SourceIdentity: Sendable, Hashable {
    public var size: Int
    /// Modification time, nanoseconds since the epoch.
    public var mtimeNanoseconds: Int64
    public var inode: UInt64
    /// A remote source's `ETag` as the origin sent it; empty for files (and origins without one).
    public var validator: String

    public init(size: Int, mtimeNanoseconds: Int64, inode: UInt64, validator: String = "") {
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.inode = inode
        self.validator = validator
    }

    /// Stable text form, e.g. `s=1234;m=1700000000000000000;i=42` (and `;v=<ETag>` when there is one).
    public var canonical: String {
        "s=\(size);m=\(mtimeNanoseconds);i=\(inode)" + (validator.isEmpty ? "" : ";v=\(validator)")
    }
    /// `canonical` without the inode, e.g. `s=1234;m=1700000000000000000` (and `;v=<ETag>`): the
    /// same for a version on every host of a fleet (inodes differ from host to host; size, mtime
    /// and validator do not on a shared or rsync'ed tree or a remote origin). Part of the shared
    /// result store's keys (`CacheKey.sharedHex`).
    public var portableCanonical: String {
        "s=\(size);m=\(mtimeNanoseconds)" + (validator.isEmpty ? "" : ";v=\(validator)")
    }
    /// Modification time in whole seconds (for `Last-Modified`).
    public var mtimeSeconds: Int64 { mtimeNanoseconds / 1_000_000_000 }
}

/// A loaded source file.
public struct SourceImage: Sendable {
    public var path: String
    public var data: [UInt8]
    public var identity: SourceIdentity

    public init(path: String, data: [UInt8], identity: SourceIdentity) {
        self.path = path
        self.data = data
        self.identity = identity
    }
}

/// Why a source could not be loaded.
public enum LoadError: Error, Equatable, Sendable {
    case notFound(String)
    /// Outside the root (symlink escape) or not a regular file.
    case forbidden(String)
    /// Larger than `limits.max_file_bytes`.
    case tooLarge(String)
    case io(String)
    /// A remote origin failed: an error status, a refused or broken connection, a body cut short.
    case upstream(String)
    /// A remote origin did not answer in time (`source.fetch_timeout`).
    case upstreamTimeout(String)
    /// Kiln's own share of capacity for this work is taken (every worker allowed to fetch from
    /// origins is fetching, `source.fetch_workers_max`): nobody's fault, gone in a moment.
    case busy(String)
}

/// One opened source version: its identity comes from the handle (`fstat`), and `readAll()`
/// reads from the same handle, so the bytes are those of that identity even when the file is
/// replaced meanwhile. The handle is closed when the value goes away.
public protocol OpenedSource: AnyObject {
    /// The root-relative path it was opened by.
    var path: String { get }
    var identity: SourceIdentity { get }
    /// All the bytes (checks the loader's size limit first).
    func readAll() throws(LoadError) -> [UInt8]
}

/// Loads sources by root-relative path. The default is `FileSource` in `Kiln`.
///
/// The pipeline calls `open` once per request: the cache key takes the opened identity, and a
/// miss reads from the same handle.
public protocol SourceLoading {
    /// Only the identity (a `stat`), for decisions that never read the file (`If-Modified-Since`).
    func identity(of path: String) throws(LoadError) -> SourceIdentity
    /// Opens one version of the source without reading it.
    func open(_ path: String) throws(LoadError) -> any OpenedSource
    func load(_ path: String) throws(LoadError) -> SourceImage
    /// Whether `path` is read from this host's disk (not from an origin): the lookup lane keys
    /// only local sources, whose identity costs a `stat`.
    func isLocal(_ path: String) -> Bool
}

extension SourceLoading {
    public func isLocal(_ path: String) -> Bool { true }

    /// For loaders without handles: the identity from `identity(of:)`, the bytes from `load`.
    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        StatThenLoad(loader: self, path: path, identity: try identity(of: path))
    }
}

/// `SourceLoading.open` of loaders without handles.
final class StatThenLoad: OpenedSource {
    let loader: any SourceLoading
    let path: String
    let identity: SourceIdentity

    init(loader: any SourceLoading, path: String, identity: SourceIdentity) {
        self.loader = loader
        self.path = path
        self.identity = identity
    }

    func readAll() throws(LoadError) -> [UInt8] { try loader.load(path).data }
}
