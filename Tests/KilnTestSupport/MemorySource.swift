import Foundation
import KilnModel

/// The double of `SourceLoading`: sources held in memory, with identities the test sets by hand,
/// that counts what the pipeline asks of it.
///
/// `open` behaves like `FileSource.open`: the handle keeps the version it was opened on (its
/// identity and bytes), even when the test `put`s a new one meanwhile. Every call is counted
/// (`opens`, `identityLookups`, `loads`) and every hand-out of bytes, by `load` or by an opened
/// handle's `readAll`, is recorded in `reads`. Thread-safe.
public final class MemorySource: SourceLoading, @unchecked Sendable {
    public init() {}

    private let lock = NSLock()
    private var stored: [String: SourceImage] = [:]
    private var counts = (opens: 0, identityLookups: 0, loads: 0)
    private var readPaths: [String] = []

    /// The sources by path.
    public var files: [String: SourceImage] {
        locked { stored }
    }

    /// Adds or replaces the source at `path` (a new version when `data` or `mtime` differ).
    public func put(_ path: String, _ data: [UInt8], mtime: Int64 = 1_700_000_000_000_000_000) {
        locked { stored[path] = SourceImage(path: path, data: data, identity: SourceIdentity(size: data.count, mtimeNanoseconds: mtime, inode: 7)) }
    }

    /// Calls of `open`.
    public var opens: Int { locked { counts.opens } }
    /// Calls of `identity(of:)` (a `stat`).
    public var identityLookups: Int { locked { counts.identityLookups } }
    /// Calls of `load`.
    public var loads: Int { locked { counts.loads } }
    /// The paths whose bytes were handed out, in order: by `load` and by opened handles' `readAll`.
    public var reads: [String] { locked { readPaths } }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        try locked { () throws(LoadError) in
            counts.identityLookups += 1
            return try find(path).identity
        }
    }

    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        let version = try locked { () throws(LoadError) in
            counts.opens += 1
            return try find(path)
        }
        return Opened(source: self, version: version)
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        try locked { () throws(LoadError) in
            counts.loads += 1
            let version = try find(path)
            readPaths.append(path)
            return version
        }
    }

    private func find(_ path: String) throws(LoadError) -> SourceImage {
        guard let version = stored[path] else { throw .notFound("no source at \(path)") }
        return version
    }

    private func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// One opened version.
    final class Opened: OpenedSource {
        let source: MemorySource
        let version: SourceImage

        init(source: MemorySource, version: SourceImage) {
            self.source = source
            self.version = version
        }

        var path: String { version.path }
        var identity: SourceIdentity { version.identity }

        func readAll() throws(LoadError) -> [UInt8] {
            source.locked { source.readPaths.append(version.path) }
            return version.data
        }
    }
}
