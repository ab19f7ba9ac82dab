import Glibc
import KilnModel
import KilnPOSIX
import Logging

/// Writing entries (`DataCaching.store`): each to a temporary file renamed into place, so readers
/// see a whole entry or none; a full disk sweeps at once, a folder that cannot be written is
/// refused with one warning.
extension DiskCache {

    @discardableResult
    public func store(_ entry: CacheEntry, for key: CacheKey) -> Bool {
        var body: [UInt8] = []
        if case .image(let image) = entry { body = image.data }
        let header = EntryCodec.encodeHeader(entry, key: key, body: body)
        let final = entryPath(key.hex)
        guard folderUsable() else { return false }

        var tmp = ""
        var fd: Int32 = -1
        var code: Int32 = 0
        for attempt in 0..<4 {
            sequence += 1
            tmp = "\(tempFolder)/\(Substring(key.hex.utf8.prefix(16))).\(getpid()).\(sequence)"
            fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            if fd >= 0 { break }
            code = Errno.current
            if code == ENOENT && attempt == 0 { CacheFiles.makeDirectories(tempFolder); continue }
            if code != EEXIST { break }
        }
        guard fd >= 0 else {
            sweepIfOutOfSpace(code, tempFolder)
            return storeFailed("cannot create a file in \(tempFolder): \(Errno.text(code))")
        }
        let written = header.withUnsafeBytes { h in body.withUnsafeBytes { b in CacheFiles.writeFully(fd, h, b) } }
        code = Errno.current
        if !written {
            close(fd)
            unlink(tmp)
            return writeFailed(tmp, code)
        }
        if close(fd) != 0 {
            code = Errno.current
            unlink(tmp)
            return writeFailed(tmp, code)
        }
        if rename(tmp, final) != 0 {
            code = Errno.current
            var moved = false
            if code == ENOENT && CacheFiles.makeDirectories(String(final.dropLast(key.hex.count + 1))) {
                moved = rename(tmp, final) == 0
                code = Errno.current
            }
            if !moved {
                unlink(tmp)
                return storeFailed("cannot rename into \(final): \(Errno.text(code))")
            }
        }
        bytesSinceSweep += header.count + body.count
        return true
    }

    /// A write that failed with `code` (its temporary file removed): one that ran out of space
    /// (`ENOSPC`, `EDQUOT`: the file system is smaller than `sizeLimit`, or shared) starts a
    /// sweep down to the low-water mark of what the file system really holds (`diskFull`).
    private func writeFailed(_ tmp: String, _ code: Int32) -> Bool {
        sweepIfOutOfSpace(code, tmp)
        return storeFailed("cannot write \(tmp): \(Errno.text(code))")
    }

    /// Starts the sweep of a full file system when `code` says there is no space (or inode) left,
    /// at most once a second (a disk filled by others may leave the sweep nothing to evict).
    private func sweepIfOutOfSpace(_ code: Int32, _ what: String) {
        guard code == ENOSPC || code == EDQUOT else { return }
        let t = now()
        guard t - lastFullSweep >= 1000,
              background.start(sweeper.fittingTheDisk(), maxBatch: DiskCache.backgroundBatch, nowMs: t) else {
            logger.debug("disk cache: no space left for \(what)")
            return
        }
        lastFullSweep = t
        bytesSinceSweep = 0
        logger.notice("disk cache: no space left for \(what); sweeping to the low-water mark of what the disk holds")
    }

    /// Whether the cache folder may be used now (`CacheFolderGuard`): logs a refusal once as an error.
    func folderUsable() -> Bool {
        guard let refusal = CacheFolderGuard.refusal(path) else { return true }
        refuse(refusal)
        return false
    }

    func refuse(_ refusal: String) {
        if refusedFolder {
            logger.debug("disk cache: \(refusal)")
        } else {
            refusedFolder = true
            logger.error("disk cache: \(refusal); answers are served without the disk cache")
        }
    }

    /// Logs the first failure of this process as a warning, later ones at debug level.
    func storeFailed(_ why: String) -> Bool {
        warnOnce(why, consequence: "answers are served without caching")
        return false
    }

    func warnOnce(_ why: String, consequence: String) {
        if warned {
            logger.debug("disk cache: \(why)")
        } else {
            warned = true
            logger.warning("disk cache: \(why); \(consequence) (further failures are logged at debug level)")
        }
    }

    public func removeEntry(for key: CacheKey) {
        unlink(entryPath(key.hex))
    }
}
