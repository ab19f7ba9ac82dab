/// The identity of a source version: changes whenever the file changes. Part of cache keys.
public struct SourceIdentity: Sendable, Hashable {
    public var size: Int
    /// Modification time, nanoseconds since the epoch.
    public var mtimeNanoseconds: Int64
    public var inode: UInt64

    public init(size: Int, mtimeNanoseconds: Int64, inode: UInt64) {
        self.size = size
        self.mtimeNanoseconds = mtimeNanoseconds
        self.inode = inode
    }

    /// Stable text form, e.g. `s=1234;m=1700000000000000000;i=42`.
    public var canonical: String { "s=\(size);m=\(mtimeNanoseconds);i=\(inode)" }
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
}

/// Loads sources by root-relative path. The default is `FileSource` in `Kiln`.
public protocol SourceLoading {
    /// Only the identity (a `stat`), for cache lookups that may avoid reading the file.
    func identity(of path: String) throws(LoadError) -> SourceIdentity
    func load(_ path: String) throws(LoadError) -> SourceImage
}
