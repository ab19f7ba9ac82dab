import Glibc
import KilnModel
import KilnPOSIX

/// Files that the layers above the pipeline keep per source beside the disk cache's entries (the
/// origins layer's version records and partial downloads), so that the disk cache's purge and
/// sweep cover them without knowing what they hold:
///
/// ```
/// <path>/remote/ab/<hex>.version     a version record (text, replaced atomically)
/// <path>/remote/ab/<hex>.part        bytes of a download that broke off
/// <path>/remote/ab/<hex>.part.meta   its sidecar (text)
/// <path>/remote/ab/<hex>.failure     an origin failure every worker remembers (text)
/// <path>/locks/ab/<hex>.lock         the source's named lock (`DiskCache.lock(named:timeout:)`)
/// ```
/// `hex` is the SHA-256 of the source path as in URLs (`origin-a/cat.jpg`), after a prefix no
/// cache key has, so these names never meet an entry's. None of them is an entry (`kiln cache
/// stats` does not count them, the LRU does not evict them): the sweep removes files older than
/// its stale age, and version records not rewritten for `recordAge`; `purge(sourcePath:)` and
/// `purgeAll()` remove them with the entries. (The folder keeps its historic name, `remote`.)
public struct SourceSideFiles: Sendable {
    /// The disk cache's folder.
    public let path: String

    /// Seconds after which the sweep removes a version record nobody rewrote (a source not asked
    /// for since; the next request fetches it again).
    public static let recordAge: Double = 7 * 86_400
    static let folderName = "remote"

    public init(path: String) {
        self.path = path
    }

    var folder: String { path + "/" + SourceSideFiles.folderName }

    /// The name of `sourcePath`'s files and lock.
    public static func id(_ sourcePath: String) -> String { Digest.sha256Hex("kiln-remote/1\n" + sourcePath) }

    func base(_ id: String) -> String { "\(folder)/\(Substring(id.utf8.prefix(2)))/\(id)" }
    public func versionPath(_ id: String) -> String { base(id) + ".version" }
    public func partPath(_ id: String) -> String { base(id) + ".part" }
    public func metaPath(_ id: String) -> String { base(id) + ".part.meta" }
    /// An origin failure remembered for every worker (`source.negative_ttl`).
    public func failurePath(_ id: String) -> String { base(id) + ".failure" }

    /// Every side file of `sourcePath` (`purge(sourcePath:)`); how many were removed.
    @discardableResult
    public func remove(sourcePath: String) -> Int {
        let id = SourceSideFiles.id(sourcePath)
        let paths: [String] = [versionPath(id), partPath(id), metaPath(id), failurePath(id)]
        return paths.filter { p in unlink(p) == 0 }.count
    }

    /// Calls `body` with the path and `lstat` of every side file.
    func forEachFile(_ body: (String, stat) -> Void) {
        for a in CacheFiles.list(folder) ?? [] where CacheFiles.isHex(a, count: 2) {
            let sub = "\(folder)/\(a)"
            CacheFiles.forEachFile(in: sub) { name, st in body("\(sub)/\(name)", st) }
        }
    }

    /// Removes every side file.
    func removeAll() {
        forEachFile { p, _ in unlink(p) }
    }

    /// Removes side files (and leftover temporary files) older than `staleBefore`, and version
    /// records older than `recordsBefore` (nanoseconds since the epoch); the count removed.
    func removeStale(staleBefore: Int64, recordsBefore: Int64) -> Int {
        var doomed: [String] = []
        forEachFile { p, st in
            let limit = p.hasSuffix(".version") ? recordsBefore : staleBefore
            if CacheFiles.mtime(st) < limit { doomed.append(p) }
        }
        return doomed.filter { unlink($0) == 0 }.count
    }

    /// Creates the folder of `id`'s files.
    public func makeFolder(_ id: String) -> Bool {
        guard CacheFolderGuard.isUsable(path) else { return false }
        return CacheFiles.makeDirectories("\(folder)/\(Substring(id.utf8.prefix(2)))")
    }

    /// Replaces the text file `p` atomically with `lines`; false for a value with a line break (it
    /// would shift the fields) or a write that failed.
    public func writeLines(_ lines: [String], to p: String) -> Bool {
        guard CacheFolderGuard.isUsable(path), lines.allSatisfy({ !$0.utf8.contains(0x0A) && !$0.utf8.contains(0x0D) }),
              CacheFiles.makeDirectories(String(p[..<p.lastIndex(of: "/")!])) else { return false }
        do {
            try Files.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), to: p)
            return true
        } catch {
            return false
        }
    }

    /// The lines of the text file `p` (under 16 KB, ending in a line break), nil otherwise.
    public func readLines(_ p: String) -> [String]? {
        let fd = open(p, Files.readRegularFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, st.st_size > 0, st.st_size < 16_384 else { return nil }
        let size = Int(st.st_size)
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buf, count in
            count = max(0, CacheFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(buf), offset: 0))
        }
        guard bytes.count == size, bytes.last == 0x0A else { return nil }
        return bytes.dropLast().split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The first `count` bytes of the regular file `p`, nil when it is shorter or unreadable.
    public func readPrefix(_ p: String, count: Int) -> [UInt8]? {
        let fd = open(p, Files.readRegularFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) >= count else { return nil }
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buf, n in
            n = max(0, CacheFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(buf), offset: 0))
        }
        return bytes.count == count ? bytes : nil
    }
}
