import Glibc
import KilnModel
import KilnPOSIX

/// The disk cache's journal of purges (`<cache.disk_path>/purged`): how a purge reaches the
/// memory caches of every worker that shares the folder, whoever ran it (`kiln cache purge`, the
/// master's `POST /_kiln/purge`).
///
/// One line per purged source: its `SourceTag.hex` and a newline, appended with `O_APPEND` in one
/// `write` (`record`), so lines of concurrent writers never interleave. A purge of everything
/// replaces the file (`reset`: a new inode); so does a purge that finds the file over
/// `rotateBytes` before appending, which bounds its size.
///
/// Each worker holds a reader (`changes()`, called by `RenderCoordinator.requestBegan()`): one
/// `stat` per request; when the file grew, it reads only the new bytes and names the purged
/// sources; when it shrank, was replaced or removed, it answers `.everything`. So the next
/// request a worker takes after a purge returned no longer sees the purged sources in memory.
/// Not thread-safe: one reader per process.
public final class PurgeJournal {
    public let path: String
    /// Above this size the next `record` first replaces the file with an empty one (readers then
    /// drop their whole memory cache once).
    public static let rotateBytes = 64 << 10
    /// Most new bytes read at once; a reader that falls further behind drops everything.
    static let maxRead = 1 << 20

    /// What happened since the last look.
    public enum Change: Equatable, Sendable {
        case none
        /// These sources (`SourceTag.hex`) were purged.
        case sources(Set<String>)
        /// The journal was replaced or cut (a purge of everything, a rotation): forget every source.
        case everything
    }

    /// The file last seen: device and inode (nil: no file), and the offset past its last whole line read.
    private var device: UInt64?
    private var inode: UInt64?
    private var offset = 0

    /// A reader that starts at the journal's current end: what was purged before it existed
    /// cannot be in its memory. Creates the (empty) file when missing, so that a later purge of
    /// everything, which replaces it, shows as a new inode.
    public init(path: String) {
        self.path = path
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        if fd >= 0 { close(fd) }
        var st = stat()
        if lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG {
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
            offset = Int(st.st_size)
        }
    }

    /// The journal of the disk cache folder `diskPath`.
    public convenience init(diskPath: String) {
        self.init(path: PurgeJournal.path(diskPath: diskPath))
    }

    public static func path(diskPath: String) -> String { diskPath + "/purged" }

    /// What was purged since the last call (or since `init`).
    public func changes() -> Change {
        var st = stat()
        // Not followed: a symbolic link (or anything but a regular file) is no journal.
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            // Removed: forget everything once; a new file starts from its beginning.
            let had = inode != nil
            device = nil
            inode = nil
            offset = 0
            return had ? .everything : .none
        }
        let size = Int(st.st_size)
        let dev = UInt64(st.st_dev), ino = UInt64(st.st_ino)
        if inode == nil {
            // Created since the last look (the folder was not writable at `init`): by a purge of
            // one source or of everything, which cannot be told apart.
            device = dev
            inode = ino
            offset = 0
            _ = readLines(upTo: size)
            return .everything
        } else if dev != device || ino != inode || size < offset {
            device = dev
            inode = ino
            offset = 0
            _ = readLines(upTo: size)  // moves past what the replacement already holds
            return .everything
        }
        guard size > offset else { return .none }
        guard size - offset <= PurgeJournal.maxRead else {
            offset = 0
            _ = readLines(upTo: size)
            return .everything
        }
        guard let tags = readLines(upTo: size) else { return .everything }
        return tags.isEmpty ? .none : .sources(tags)
    }

    /// Reads the whole lines between `offset` and `size`, moves `offset` past the last one; nil
    /// when the file cannot be read (then the caller forgets everything).
    private func readLines(upTo size: Int) -> Set<String>? {
        let fd = open(path, Files.readRegularFlags)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let want = size - offset
        guard want > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: want)
        let n = bytes.withUnsafeMutableBytes { CacheFiles.readFully(fd, into: $0, offset: offset) }
        guard n > 0 else { return n == 0 ? [] : nil }
        // A line being written (never seen with O_APPEND writes, but cheap to allow) waits for the next look.
        guard let end = bytes[..<n].lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        offset += end + 1
        var tags = Set<String>()
        for line in bytes[...end].split(separator: UInt8(ascii: "\n")) {
            let text = String(decoding: line, as: UTF8.self)
            if text.utf8.count == 32, CacheFiles.isHex(text, count: 32) { tags.insert(text) }
        }
        return tags
    }

    // MARK: Writing

    /// Appends `tag` (one `write` with `O_APPEND`), first replacing the file with an empty one
    /// when it is over `rotateBytes`. False when the file cannot be written (logged by the caller).
    @discardableResult
    public static func record(_ tag: SourceTag, diskPath: String) -> Bool {
        let p = path(diskPath: diskPath)
        var st = stat()
        if lstat(p, &st) == 0, Int(st.st_size) > rotateBytes, !reset(diskPath: diskPath) { return false }
        let fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let line = Array((tag.hex + "\n").utf8)
        return line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == line.count
    }

    /// Replaces the journal with an empty file (`rename`: readers see a new inode and forget
    /// every source). False when it cannot be written.
    @discardableResult
    public static func reset(diskPath: String) -> Bool {
        let p = path(diskPath: diskPath)
        let tmp = "\(diskPath)/tmp/purged.\(getpid()).\(UInt64(WallClock.milliseconds()))"
        _ = CacheFiles.makeDirectories(diskPath + "/tmp")
        let fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard fd >= 0 else { return false }
        close(fd)
        guard rename(tmp, p) == 0 else {
            unlink(tmp)
            return false
        }
        return true
    }
}
