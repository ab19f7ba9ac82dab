import Glibc
import KilnPOSIX

/// The check that keeps the disk cache out of folders it does not own (issue 25): the cache folder
/// itself (the last component of `cache.disk_path`) must be a real folder, never a symbolic link.
/// A folder replaced by a link while the server runs (`rm -rf cache; ln -s /srv/images cache`)
/// would otherwise have entries, `locks/` and `tmp/` written into wherever the link points, and
/// the sweep delete files there. Every write, lock, sweep and purge checks it first (`lstat`,
/// about a microsecond) and refuses while it is a link; the disk cache logs the refusal once as
/// an error and serves uncached. Folders above the last component may be links (`/var` →
/// `/private/var`); a configured path that is a link is refused from the start: configure the
/// folder it points to.
enum CacheFolderGuard {
    /// Why `path` must not be used now, nil when it may: a folder, or missing (it is created).
    static func refusal(_ path: String) -> String? {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            return Errno.current == ENOENT ? nil : "cannot check the cache folder \(path): \(Errno.text(Errno.current))"
        }
        switch st.st_mode & S_IFMT {
        case S_IFDIR: return nil
        case S_IFLNK: return "the cache folder \(path) is a symbolic link (replaced while running?); refusing to read or write through it"
        default: return "the cache folder \(path) is not a folder; refusing to use it"
        }
    }

    static func isUsable(_ path: String) -> Bool { refusal(path) == nil }
}
