import Glibc
import KilnModel
import KilnPOSIX

/// Loads sources from a folder, never from outside it.
///
/// The path from the URL has no `.`/`..` segments (the parser's `PathDecoding` refuses them);
/// symlinks are resolved and the result must still lie under the root's real path
/// (`RootConfinement`, in `Security/` with the other guards).
public struct FileSource: SourceLoading {
    /// The root's real path (symlinks resolved), without a trailing slash.
    public let root: String
    public let maxFileBytes: Int

    /// Fails when the root does not exist or is not a folder (checked at start-up).
    public init(root: String, maxFileBytes: Int) throws(LoadError) {
        guard let real = RootConfinement.realPath(root) else { throw .notFound("root folder \(root) does not exist") }
        var st = stat()
        guard stat(real, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw .notFound("root \(root) is not a folder")
        }
        self.root = real == "/" ? "" : real
        self.maxFileBytes = maxFileBytes
    }

    /// Resolves a root-relative path to a real path under the root (`RootConfinement`).
    func resolve(_ path: String) throws(LoadError) -> String {
        try RootConfinement(root: root).resolve(path)
    }

    public func identity(of path: String) throws(LoadError) -> SourceIdentity {
        let real = try resolve(path)
        var st = stat()
        guard stat(real, &st) == 0 else { throw .notFound("no source at \(path)") }
        return try FileSource.identity(st, path: path)
    }

    /// `realpath`, `open` (no symlink at the last step, never blocking: a FIFO in place of a
    /// source would hold the worker), `fstat`: the identity of what will be read; anything but a
    /// regular file is refused like a missing one.
    public func open(_ path: String) throws(LoadError) -> any OpenedSource {
        let real = try resolve(path)
        let fd = Glibc.open(real, Files.readRegularFlags)
        guard fd >= 0 else {
            if Errno.current == EACCES { throw .forbidden("permission denied") }
            throw .notFound("no source at \(path)")
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            close(fd)
            throw .io("cannot stat \(path)")
        }
        do {
            let identity = try FileSource.identity(st, path: path)
            Files.clearNonBlocking(fd)
            return OpenedFile(fd: fd, path: path, identity: identity, maxFileBytes: maxFileBytes)
        } catch {
            close(fd)
            throw error
        }
    }

    public func load(_ path: String) throws(LoadError) -> SourceImage {
        let opened = try open(path)
        return SourceImage(path: path, data: try opened.readAll(), identity: opened.identity)
    }

    static func identity(_ st: stat, path: String) throws(LoadError) -> SourceIdentity {
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notFound("\(path) is not a file") }
        let mtime = Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
        return SourceIdentity(size: Int(st.st_size), mtimeNanoseconds: mtime, inode: UInt64(st.st_ino))
    }
}
