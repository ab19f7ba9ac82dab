import Glibc
import KilnModel
import KilnPipeline
import KilnPOSIX

/// What the workers sharing a disk cache know about one remote source (`SharedOriginSource`): its
/// version and when it was last checked with the origin (wall clock, so every process agrees).
struct SharedVersion: Sendable, Equatable {
    var identity: SourceIdentity
    var etag: String?
    var lastModified: String?
    /// Wall clock, milliseconds since the epoch.
    var checkedAt: Int64
}

/// An origin failure for one remote source that every worker sharing a disk cache remembers for
/// `source.negative_ttl` (`SharedOriginSource`): the error to answer with, until when (wall
/// clock), and how many resumes of a kept partial download are still allowed in that time.
struct SharedFailure: Sendable, Equatable {
    var error: LoadError
    /// Wall clock, milliseconds since the epoch.
    var until: Int64
    var resumes: Int
}

/// What the workers sharing a disk cache keep about remote sources, in the disk cache's per-source
/// side files (`SourceSideFiles`: the purge and the sweep cover them): the version record
/// (`SharedVersion`, text), a remembered failure (`SharedFailure`, text) and a partial download (`.part`, trusted only up to the length its
/// sidecar, `PartialDownload`, names). Records and sidecars are replaced atomically.
struct SharedOriginFiles {
    let side: SourceSideFiles

    init(path: String) {
        side = SourceSideFiles(path: path)
    }

    /// The name of `sourcePath`'s files and fetch lock.
    static func id(_ sourcePath: String) -> String { SourceSideFiles.id(sourcePath) }

    // MARK: Version records

    func version(_ id: String, sourcePath: String) -> SharedVersion? {
        guard let lines = side.readLines(side.versionPath(id)), lines.count == 7, lines[0] == "kiln-remote-version/1",
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
        return side.writeLines(lines, to: side.versionPath(id))
    }

    // MARK: Failures

    func failure(_ id: String, sourcePath: String) -> SharedFailure? {
        guard let lines = side.readLines(side.failurePath(id)), lines.count == 6, lines[0] == "kiln-origin-failure/1",
              lines[1] == sourcePath, let until = Int64(lines[4]), let resumes = Int(lines[5]) else { return nil }
        let message = lines[3]
        let error: LoadError
        switch lines[2] {
        case "not_found": error = .notFound(message)
        case "forbidden": error = .forbidden(message)
        case "too_large": error = .tooLarge(message)
        case "io": error = .io(message)
        case "upstream": error = .upstream(message)
        case "upstream_timeout": error = .upstreamTimeout(message)
        case "busy": error = .busy(message)
        default: return nil
        }
        return SharedFailure(error: error, until: until, resumes: resumes)
    }

    @discardableResult
    func write(_ failure: SharedFailure, _ id: String, sourcePath: String) -> Bool {
        let (kind, message): (String, String)
        switch failure.error {
        case let .notFound(m): (kind, message) = ("not_found", m)
        case let .forbidden(m): (kind, message) = ("forbidden", m)
        case let .tooLarge(m): (kind, message) = ("too_large", m)
        case let .io(m): (kind, message) = ("io", m)
        case let .upstream(m): (kind, message) = ("upstream", m)
        case let .upstreamTimeout(m): (kind, message) = ("upstream_timeout", m)
        case let .busy(m): (kind, message) = ("busy", m)
        }
        let oneLine = String(String.UnicodeScalarView(message.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 }))
        return side.writeLines(["kiln-origin-failure/1", sourcePath, kind, oneLine, "\(failure.until)", "\(failure.resumes)"],
                               to: side.failurePath(id))
    }

    func removeFailure(_ id: String) {
        unlink(side.failurePath(id))
    }

    // MARK: Partial downloads

    /// The partial download of `id` and its bytes, nil when there is none or it is unusable (a
    /// `.part` shorter than its sidecar says, a sidecar that does not parse).
    func partial(_ id: String) -> (PartialDownload, [UInt8])? {
        guard let lines = side.readLines(side.metaPath(id)), let meta = PartialDownload(lines: lines),
              let bytes = side.readPrefix(side.partPath(id), count: meta.bytes) else { return nil }
        return (meta, bytes)
    }

    /// Starts a partial download with `bytes` (replacing any other).
    @discardableResult
    func startPartial(_ meta: PartialDownload, bytes: [UInt8], _ id: String) -> Bool {
        removePartial(id)
        guard side.makeFolder(id) else { return false }
        do {
            try Files.writeAtomically(bytes, to: side.partPath(id))
        } catch {
            return false
        }
        return side.writeLines(meta.lines, to: side.metaPath(id))
    }

    /// Appends `more` to the partial download `meta` describes (at `meta.bytes`), then records the
    /// new length. A failure leaves the sidecar's length, which still describes good bytes.
    @discardableResult
    func extendPartial(_ meta: PartialDownload, with more: [UInt8], _ id: String) -> Bool {
        let fd = open(side.partPath(id), O_WRONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return false }
        let written: Bool = more.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(meta.bytes + done))
                if n < 0 && Errno.current == EINTR { continue }
                guard n > 0 else { return false }
                done += n
            }
            return true
        }
        let closed = close(fd) == 0
        guard written && closed else { return false }
        var grown = meta
        grown.bytes += more.count
        return side.writeLines(grown.lines, to: side.metaPath(id))
    }

    func removePartial(_ id: String) {
        unlink(side.metaPath(id))
        unlink(side.partPath(id))
    }
}
