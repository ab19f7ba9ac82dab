import Glibc
import KilnPOSIX

/// The path guard of sources: a root-relative path resolves (symlinks followed, `realpath`) to a
/// real path that must lie under the root's real path, or it is refused. With `PathDecoding`
/// (no `.`, `..`, encoded slashes or NUL in the URL's path) it keeps every read inside the root.
public struct RootConfinement: Sendable, Equatable {
    /// The root's real path, without a trailing slash ("" for `/`).
    public let root: String

    public init(root: String) {
        self.root = root
    }

    /// The real path of `path` under the root. Throws `.notFound` when it does not resolve,
    /// `.forbidden` when it resolves outside the root or cannot be searched.
    public func resolve(_ path: String) throws(LoadError) -> String {
        let joined = root + "/" + path
        guard let real = RootConfinement.realPath(joined) else {
            let code = Errno.current
            if code == EACCES { throw .forbidden("permission denied") }
            throw .notFound("no source at \(path)")
        }
        guard real.hasPrefix(root + "/") else { throw .forbidden("source path leaves the root") }
        return real
    }

    /// `realpath(3)`, nil when the path does not resolve.
    public static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }
}
