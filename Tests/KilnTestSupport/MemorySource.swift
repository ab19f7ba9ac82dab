import Glibc
import KilnModel
import KilnPOSIX

/// A source stage over bytes in memory that counts its reads (the double of `SourceLoading`).
public final class MemorySource: SourceLoading, @unchecked Sendable {
    public init() {}

    public var files: [String: SourceImage] = [:]

    public func put(_ path: String, _ data: [UInt8], mtime: Int64 = 1_700_000_000_000_000_000) {
        files[path] = SourceImage(path: path, data: data, identity: SourceIdentity(size: data.count, mtimeNanoseconds: mtime, inode: 7))
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        guard let f = files[path] else { throw .notFound("no source at \(path)") }
        return f.identity
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        guard let f = files[path] else { throw .notFound("no source at \(path)") }
        return f
    }
}
