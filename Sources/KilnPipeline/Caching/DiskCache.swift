import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// The disk cache (`DataCaching`, and `RenderLocking` by `flock`): one file per entry, named by the
/// key's SHA-256 in 256 fan-out folders.
///
/// ```
/// <path>/ab/abcd…(64 hex)        entries (EntryCodec: header + body)
/// <path>/tmp/<hex16>.<pid>.<n>   files being written, renamed into place when complete
/// <path>/locks/ab/<hex>.lock     render locks (flock), removed by their holder or by the sweep
/// <path>/sweep.lock              held (flock, non-blocking) by the one process sweeping
/// <path>/remote/ab/<hex>.*        remote sources' shared versions and partial downloads
///                                 (SharedOriginFiles; not entries)
/// ```
/// Readers see a whole entry or none (temporary file + `rename` in the same file system); a
/// damaged entry (truncated, bad checksum) is a miss and is removed. No `fsync`: after a power
/// loss an entry may be damaged, and is then detected, but never served.
///
/// One level of 256 folders: 1GB of 30 KB entries is about 130 files a folder. A second level
/// (`ab/cd/`, 65 536 folders) left about one file per folder, and the sweep's scan was mostly
/// opening folders: 30 000 entries took 0.9 s to scan that way, 0.17 s now (loaded 2-core VM).
///
/// Access is recorded in the entry's mtime, at most once per `touchInterval` per entry
/// (`futimens` on hits whose mtime is older); the sweep evicts by mtime.
/// Not thread-safe: one instance per process.
public final class DiskCache: DataCaching, RenderLocking {
    public let path: String
    /// Disk usage of the entries (allocated blocks, as `du` counts) above which a sweep evicts.
    public let sizeLimit: Int
    /// A sweep evicts down to `lowWater × sizeLimit`.
    public let lowWater: Double
    /// Seconds between two recordings of access to the same entry. Default 60.
    public var touchInterval: Int64 = 60
    /// Seconds after which unlocked lock files and temporary files are removed by the sweep. Default 600.
    public var staleAge: Double = 600
    /// The sweep reads the header of every entry of at most this size, looking for expired
    /// failures (they have no body). Larger failures (very long URLs) age out by LRU like results.
    var failureProbeSize = 2048

    let logger: Logger
    /// Wall clock in milliseconds since the epoch (injected by tests).
    let now: () -> Int64
    /// Whether a write failure (entry, temporary or lock file) was logged as a warning already.
    var warned = false
    /// When the last sweep for a full file system started (wall clock, ms).
    var lastFullSweep: Int64 = 0
    /// Whether a refused cache folder (`CacheFolderGuard`) was logged as an error already.
    var refusedFolder = false
    var sequence = 0
    /// Bytes stored since the last `maybeSweep` that started a sweep.
    public internal(set) var bytesSinceSweep = 0
    /// The sweeps `maybeSweep` starts, off the request path.
    let background = BackgroundSweep()
    /// This process's reader of the purge journal (`RenderCoordinator.dropPurgedSources`), made
    /// at its first use: what was purged before cannot be in this process's memory.
    public private(set) lazy var purges = PurgeJournal(diskPath: path)
    /// Evictions per round of a background sweep (rounds go on while over the limit): bounds its
    /// memory to about 48 bytes each (`OldestEntries`), 2.4 MB.
    static let backgroundBatch = 50_000

    /// Creates the folder when missing; if that fails the cache still works as an always-missing,
    /// never-storing cache and the failure is logged once.
    public init(path: String, sizeLimit: Int = 1 << 30, lowWater: Double = 0.9, logger: Logger,
                now: @escaping () -> Int64 = DiskCache.wallClockMilliseconds) {
        var p = path
        while p.count > 1 && p.hasSuffix("/") { p.removeLast() }
        self.path = p
        self.sizeLimit = sizeLimit
        self.lowWater = min(1, max(0, lowWater))
        self.logger = logger
        self.now = now
        if let refusal = CacheFolderGuard.refusal(p) {
            refuse(refusal)
        } else if !CacheFiles.makeDirectories(p) {
            _ = storeFailed("cannot create the cache folder \(p): \(Errno.text(Errno.current))")
        }
    }

    /// The disk cache of a configuration, nil when `cache.disk_path` is empty.
    public convenience init?(_ configuration: CacheConfiguration, logger: Logger) {
        guard configuration.diskEnabled else { return nil }
        self.init(path: configuration.diskPath, sizeLimit: configuration.diskSizeLimit, lowWater: configuration.diskLowWater, logger: logger)
    }

    /// Wall clock, milliseconds since the epoch (the clock of negative entries' expiry).
    public static func wallClockMilliseconds() -> Int64 { WallClock.milliseconds() }

    // MARK: Paths

    func entryPath(_ hex: String) -> String { "\(path)/\(Substring(hex.utf8.prefix(2)))/\(hex)" }

    /// The file that holds `key`'s entry (whether or not it exists).
    public func entryFilePath(_ key: CacheKey) -> String { entryPath(key.hex) }

    func lockPath(_ hex: String) -> String { "\(path)/locks/\(Substring(hex.utf8.prefix(2)))/\(hex).lock" }
    var tempFolder: String { path + "/tmp" }
    var lockFolder: String { path + "/locks" }
    var sweepLockPath: String { path + "/sweep.lock" }

    // MARK: Reading

    public func entry(for key: CacheKey) -> CacheEntry? {
        guard folderUsable() else { return nil }
        let p = entryPath(key.hex)
        let fd = open(p, Files.readRegularFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        switch DiskCache.read(fd, st, body: true) {
        case .missing:
            return nil
        case .corrupt(let why):
            discardCorrupt(fd, p, why)
            return nil
        case let .found(header, body):
            guard header.key == key.text else {
                discardCorrupt(fd, p, "holds another key")
                return nil
            }
            if header.kind == EntryCodec.kindFailure {
                guard header.expires == 0 || header.expires > now() else { return nil }
                return .failure(PipelineFailure(header.failureKind, header.message), expires: header.expires)
            }
            if now() / 1000 - Int64(st.st_mtim.tv_sec) >= touchInterval { futimens(fd, nil) }
            let format = ImageFormat(rawValue: header.format)
            let document = DocumentKind(rawValue: header.format)
            guard format != nil || document != nil || header.format.isEmpty else {
                discardCorrupt(fd, p, "names an unknown format '\(header.format)'")
                return nil
            }
            return .image(CachedImage(data: body, format: format, digest: header.digest,
                                      sourceModified: header.lastModified, sourcePath: header.sourcePath, document: document))
        }
    }

    enum ReadOutcome {
        case missing
        case corrupt(String)
        case found(EntryCodec.Header, [UInt8])
    }

    /// Reads and checks the entry open on `fd`; with `body: false` only the header (no checksum).
    static func read(_ fd: Int32, _ st: stat, body wantBody: Bool) -> ReadOutcome {
        guard (st.st_mode & S_IFMT) == S_IFREG else { return .corrupt("not a regular file") }
        let size = Int(st.st_size)
        // Whole entries up to 4 MB in one read (one system call fewer than header, then body).
        let first = wantBody && size <= 4 << 20 ? size : min(size, 4096)
        var head = [UInt8](unsafeUninitializedCapacity: first) { buf, count in
            count = max(0, CacheFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(buf), offset: 0))
        }
        guard head.count == first else { return .corrupt("short read") }
        var parsed = head.withUnsafeBytes { EntryCodec.parse($0, fileSize: size) }
        if case .needMore(let n) = parsed {
            let have = head.count
            head += [UInt8](repeating: 0, count: n - have)
            guard head.withUnsafeMutableBytes({ CacheFiles.readFully(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[have...]), offset: have) }) == n - have else {
                return .corrupt("short read")
            }
            parsed = head.withUnsafeBytes { EntryCodec.parse($0, fileSize: size) }
        }
        guard case .header(let header) = parsed else {
            if case .corrupt(let why) = parsed { return .corrupt(why) }
            return .corrupt("unreadable header")
        }
        guard wantBody else { return .found(header, []) }
        let h = header.headerSize, n = header.bodySize
        var complete = true
        let body = head.count >= h + n ? Array(head[h..<(h + n)]) : [UInt8](unsafeUninitializedCapacity: n) { buf, count in
            let inHead = min(head.count - h, n)
            if inHead > 0 {
                head.withUnsafeBytes { src in
                    UnsafeMutableRawBufferPointer(buf).copyMemory(from: UnsafeRawBufferPointer(rebasing: src[h..<(h + inHead)]))
                }
            }
            let rest = UnsafeMutableRawBufferPointer(rebasing: UnsafeMutableRawBufferPointer(buf)[inHead...])
            let got = rest.isEmpty ? 0 : CacheFiles.readFully(fd, into: rest, offset: h + inHead)
            if got != rest.count { complete = false }
            count = complete ? n : 0
        }
        guard complete else { return .corrupt("short read") }
        var sum = EntryChecksum()
        head.withUnsafeBytes { sum.update(UnsafeRawBufferPointer(rebasing: $0[0..<(h - 8)])) }
        body.withUnsafeBytes { sum.update($0) }
        guard sum.value == header.checksum else { return .corrupt("checksum mismatch") }
        return .found(header, body)
    }

    /// Removes a damaged entry unless the path already names another file (a fresh entry renamed
    /// into place meanwhile).
    private func discardCorrupt(_ fd: Int32, _ p: String, _ why: String) {
        logger.warning("disk cache: removing damaged entry \(p): \(why)")
        if CacheFiles.isSameFile(fd, p) { unlink(p) }
    }

    // MARK: Sweeping

    /// Sweeps (if no other process is) once a twentieth of `sizeLimit` was stored by this process
    /// since the last time. Call it when a response is done, not before sending it.
    @discardableResult
    public func maybeSweep() -> SweepStats? {
        let finished = background.takeFinished()
        if bytesSinceSweep >= max(1, sizeLimit / 20),
           background.start(sweeper, maxBatch: DiskCache.backgroundBatch, nowMs: now()) {
            bytesSinceSweep = 0
        }
        return finished
    }

    public func finishSweep(timeout: Double) -> SweepStats? {
        background.wait(timeout: timeout)
        return background.takeFinished()
    }
}
