import Glibc
import KilnCore
import KilnSystem

/// What the workers sharing a disk cache know about one remote source (`SharedOriginSource`): its
/// version and when it was last checked with the origin (wall clock, so every process agrees).
struct SharedVersion: Sendable, Equatable {
    var identity: SourceIdentity
    var etag: String?
    var lastModified: String?
    /// Wall clock, milliseconds since the epoch.
    var checkedAt: Int64
}

/// The files the workers share about remote sources, beside the disk cache's entries:
///
/// ```
/// <path>/remote/ab/<hex>.version     the source's version record (SharedVersion, text)
/// <path>/remote/ab/<hex>.part        bytes of a download that broke off
/// <path>/remote/ab/<hex>.part.meta   its sidecar (PartialDownload, text)
/// <path>/locks/ab/<hex>.lock         the source's fetch lock (DiskCache.lock(hex:))
/// ```
/// `hex` is the SHA-256 of the source path as in URLs (`origin-a/cat.jpg`), after a prefix no
/// cache key has, so these names never meet an entry's. Records and sidecars are replaced
/// atomically (`Files.writeAtomically`); a `.part` is only trusted up to the length its sidecar
/// names. None of them is an entry (`kiln cache stats` does not count them, the LRU does not
/// evict them): the sweep removes partial downloads older than `staleAge` and records not
/// rewritten for `recordAge`; `purge(sourcePath:)` and `purgeAll()` remove them with the entries.
struct SharedOriginFiles {
    /// The disk cache's folder.
    let path: String

    /// Seconds after which the sweep removes a version record nobody rewrote (a source not asked
    /// for since; the next request fetches it again).
    static let recordAge: Double = 7 * 86_400
    static let folderName = "remote"

    var folder: String { path + "/" + SharedOriginFiles.folderName }

    /// The name of `sourcePath`'s files and lock.
    static func id(_ sourcePath: String) -> String { Digest.sha256Hex("kiln-remote/1\n" + sourcePath) }

    func base(_ id: String) -> String { "\(folder)/\(Substring(id.utf8.prefix(2)))/\(id)" }
    func versionPath(_ id: String) -> String { base(id) + ".version" }
    func partPath(_ id: String) -> String { base(id) + ".part" }
    func metaPath(_ id: String) -> String { base(id) + ".part.meta" }

    // MARK: Version records

    func version(_ id: String, sourcePath: String) -> SharedVersion? {
        guard let lines = readLines(versionPath(id)), lines.count == 7, lines[0] == "kiln-remote-version/1",
              lines[1] == sourcePath, let size = Int(lines[2]), size >= 0, let mtime = Int64(lines[3]),
              let checked = Int64(lines[6]) else { return nil }
        let identity = SourceIdentity(size: size, mtimeNanoseconds: mtime, inode: 0, validator: lines[4])
        return SharedVersion(identity: identity, etag: lines[4].isEmpty ? nil : lines[4],
                             lastModified: lines[5].isEmpty ? nil : lines[5], checkedAt: checked)
    }

    @discardableResult
    func write(_ version: SharedVersion, _ id: String, sourcePath: String) -> Bool {
        let lines = ["kiln-remote-version/1", sourcePath, "\(version.identity.size)", "\(version.identity.mtimeNanoseconds)",
                     version.etag ?? "", version.lastModified ?? "", "\(version.checkedAt)"]
        return writeLines(lines, to: versionPath(id))
    }

    // MARK: Partial downloads

    /// The partial download of `id` and its bytes, nil when there is none or it is unusable (a
    /// `.part` shorter than its sidecar says, a sidecar that does not parse).
    func partial(_ id: String) -> (PartialDownload, [UInt8])? {
        guard let lines = readLines(metaPath(id)), let meta = PartialDownload(lines: lines) else { return nil }
        let fd = open(partPath(id), Files.readRegularFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG, Int(st.st_size) >= meta.bytes else { return nil }
        let bytes = [UInt8](unsafeUninitializedCapacity: meta.bytes) { buf, count in
            count = max(0, CacheFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(buf), offset: 0))
        }
        return bytes.count == meta.bytes ? (meta, bytes) : nil
    }

    /// Starts a partial download with `bytes` (replacing any other).
    @discardableResult
    func startPartial(_ meta: PartialDownload, bytes: [UInt8], _ id: String) -> Bool {
        removePartial(id)
        guard makeFolder(id) else { return false }
        do {
            try Files.writeAtomically(bytes, to: partPath(id))
        } catch {
            return false
        }
        return writeLines(meta.lines, to: metaPath(id))
    }

    /// Appends `more` to the partial download `meta` describes (at `meta.bytes`), then records the
    /// new length. A failure leaves the sidecar's length, which still describes good bytes.
    @discardableResult
    func extendPartial(_ meta: PartialDownload, with more: [UInt8], _ id: String) -> Bool {
        let fd = open(partPath(id), O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        let written: Bool = more.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(meta.bytes + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
        let closed = close(fd) == 0
        guard written && closed else { return false }
        var grown = meta
        grown.bytes += more.count
        return writeLines(grown.lines, to: metaPath(id))
    }

    func removePartial(_ id: String) {
        unlink(metaPath(id))
        unlink(partPath(id))
    }

    /// The record and any partial download of `sourcePath` (`purge(sourcePath:)`); how many files.
    @discardableResult
    func remove(sourcePath: String) -> Int {
        let id = SharedOriginFiles.id(sourcePath)
        let paths: [String] = [versionPath(id), partPath(id), metaPath(id)]
        return paths.filter { p in unlink(p) == 0 }.count
    }

    /// Calls `body` with the path and `lstat` of every file under `remote/`.
    func forEachFile(_ body: (String, stat) -> Void) {
        for a in CacheFiles.list(folder) ?? [] where CacheFiles.isHex(a, count: 2) {
            let sub = "\(folder)/\(a)"
            CacheFiles.forEachFile(in: sub) { name, st in body("\(sub)/\(name)", st) }
        }
    }

    /// Removes partial downloads (and leftover temporary files) older than `staleBefore`, and
    /// records older than `recordsBefore` (nanoseconds since the epoch); the count removed.
    func removeStale(staleBefore: Int64, recordsBefore: Int64) -> Int {
        var doomed: [String] = []
        forEachFile { p, st in
            let limit = p.hasSuffix(".version") ? recordsBefore : staleBefore
            if CacheFiles.mtime(st) < limit { doomed.append(p) }
        }
        return doomed.filter { unlink($0) == 0 }.count
    }

    // MARK: Text files

    private func makeFolder(_ id: String) -> Bool {
        CacheFiles.makeDirectories("\(folder)/\(Substring(id.utf8.prefix(2)))")
    }

    private func writeLines(_ lines: [String], to p: String) -> Bool {
        // A value with a line break would shift the fields: refuse it (headers never have one).
        guard lines.allSatisfy({ !$0.utf8.contains(0x0A) && !$0.utf8.contains(0x0D) }),
              CacheFiles.makeDirectories(String(p[..<p.lastIndex(of: "/")!])) else { return false }
        do {
            try Files.writeAtomically(Array((lines.joined(separator: "\n") + "\n").utf8), to: p)
            return true
        } catch {
            return false
        }
    }

    private func readLines(_ p: String) -> [String]? {
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
}
