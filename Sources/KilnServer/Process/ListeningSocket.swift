import KilnHTTP
import Glibc
import KilnPOSIX

/// The master's listening socket, shared by every worker as fd 0.
///
/// Unix sockets: a stale socket file (nobody accepting) is removed first; any other file at the path,
/// or a socket some process still accepts on, is an error. After `bind` the file gets `socket_mode`
/// and, when configured, `socket_owner`/`socket_group`, so nginx's workers (`www-data`, `nobody`)
/// can connect.
public final class ListeningSocket {
    public let fd: Int32
    public let address: ListenAddress
    /// The queue length `listen(2)` was given: `server.backlog`, cut to `net.core.somaxconn`
    /// (`ListenBacklog`).
    public let backlog: Int
    /// Device and inode of the socket file we bound, so we never unlink a file that a later
    /// server put at the same path.
    private let boundFile: (dev: UInt, ino: UInt)?
    private var closed = false

    private init(fd: Int32, address: ListenAddress, backlog: Int, boundFile: (dev: UInt, ino: UInt)?) {
        self.fd = fd
        self.address = address
        self.backlog = backlog
        self.boundFile = boundFile
    }

    /// Creates, binds and listens according to `configuration` (`listen`, `backlog`, `socket_mode`,
    /// `socket_owner`, `socket_group`). `kernelLimit`: `net.core.somaxconn`, which `backlog` is cut to.
    public static func open(_ configuration: ServerConfiguration,
                            kernelLimit: Int? = ListenBacklog.kernelLimit()) throws(ListenError) -> ListeningSocket {
        let backlog = ListenBacklog.effective(configured: configuration.backlog, limit: kernelLimit).backlog
        switch configuration.listen {
        case let .unix(path):
            return try openUnix(path: path, configuration, backlog: backlog)
        case let .tcp(host, port):
            return try openTCP(host: host, port: port, configuration, backlog: backlog)
        }
    }

    /// Closes the descriptor and removes the socket file if it is still the one we bound.
    public func close() {
        guard !closed else { return }
        closed = true
        _ = Glibc.close(fd)
        removeSocketFile()
    }

    /// Removes the unix socket file if the path still names the file we bound. Returns whether it did.
    @discardableResult
    public func removeSocketFile() -> Bool {
        guard let path = address.unixPath, let bound = boundFile else { return false }
        var st = stat()
        guard lstat(path, &st) == 0, UInt(st.st_dev) == bound.dev, UInt(st.st_ino) == bound.ino else { return false }
        return unlink(path) == 0
    }

    deinit { close() }

    // MARK: - unix

    static func openUnix(path: String, _ c: ServerConfiguration, backlog: Int) throws(ListenError) -> ListeningSocket {
        let address = ListenAddress.unix(path: path)
        let (uid, gid) = try resolveOwnership(c)
        try makeFolder(of: path, address)
        try removeStaleSocket(path, address)

        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: sa.sun_path) else {
            throw ListenError(address, "the socket path is too long")
        }
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let fd = try makeSocket(AF_UNIX, address)
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let rc = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        guard rc == 0 else {
            let e = Errno.current
            _ = Glibc.close(fd)
            let hint = e == EACCES ? ": the user running kiln may not write in \(folder(of: path)); " + folderHint(path) : ""
            throw ListenError(address, "bind: \(Errno.text(e))\(hint)")
        }
        var st = stat()
        guard lstat(path, &st) == 0 else {
            let e = Errno.current
            _ = Glibc.close(fd)
            throw ListenError(address, "stat after bind: \(Errno.text(e))")
        }
        let socket = ListeningSocket(fd: fd, address: address, backlog: backlog, boundFile: (UInt(st.st_dev), UInt(st.st_ino)))
        guard chmod(path, mode_t(c.socketMode)) == 0 else {
            throw ListenError(address, "chmod \(String(c.socketMode, radix: 8)): \(Errno.text(Errno.current))")
        }
        if uid != nil || gid != nil {
            guard chown(path, uid ?? uid_t.max, gid ?? gid_t.max) == 0 else {
                throw ListenError(address, "chown \(c.socketOwner):\(c.socketGroup): \(Errno.text(Errno.current))")
            }
        }
        guard listen(fd, Int32(backlog)) == 0 else {
            throw ListenError(address, "listen: \(Errno.text(Errno.current))")
        }
        return socket
    }

    /// Creates the socket's folder when it is missing (one level, mode 0755: the default
    /// `/run/kiln` when kiln runs as root), so the default `listen` works out of the box; a
    /// folder kiln may not create is an error that says how to make it.
    static func makeFolder(of path: String, _ address: ListenAddress) throws(ListenError) {
        let dir = folder(of: path)
        var st = stat()
        guard stat(dir, &st) != 0 else { return }
        guard mkdir(dir, 0o755) == 0 || Errno.current == EEXIST else {
            throw ListenError(address, "cannot create the socket's folder \(dir): \(Errno.text(Errno.current)); " + folderHint(path))
        }
    }

    static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// What to do when the socket's folder is not kiln's to write in.
    static func folderHint(_ path: String) -> String {
        "create it for that user (sudo install -d -o \"$(id -un)\" -g www-data -m 0750 \(folder(of: path))) or listen elsewhere (--listen unix:/tmp/kiln/kiln.sock)"
    }

    /// Removes a socket file nobody accepts on (left by a killed server); refuses anything else.
    static func removeStaleSocket(_ path: String, _ address: ListenAddress) throws(ListenError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }
        guard st.st_mode & S_IFMT == S_IFSOCK else {
            throw ListenError(address, "\(path) exists and is not a socket; refusing to remove it")
        }
        if socketAccepts(path) {
            throw ListenError(address, "another process is accepting connections on \(path)")
        }
        guard unlink(path) == 0 || Errno.current == ENOENT else {
            throw ListenError(address, "cannot remove the stale socket \(path): \(Errno.text(Errno.current))")
        }
    }

    /// Whether a non-blocking connect to the unix socket succeeds (or finds its queue full).
    static func socketAccepts(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { _ = Glibc.close(fd) }
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: sa.sun_path) else { return false }
        withUnsafeMutableBytes(of: &sa.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let len = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + 1)
        let rc = withUnsafePointer(to: &sa) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, len) }
        }
        return rc == 0 || Errno.current == EAGAIN || Errno.current == EINPROGRESS
    }

    /// `socket_owner` / `socket_group` as ids: numeric or looked up by name.
    static func resolveOwnership(_ c: ServerConfiguration) throws(ListenError) -> (uid_t?, gid_t?) {
        var uid: uid_t?
        var gid: gid_t?
        if !c.socketOwner.isEmpty {
            if let n = UInt32(c.socketOwner) {
                uid = n
            } else if let pw = getpwnam(c.socketOwner) {
                uid = pw.pointee.pw_uid
            } else {
                throw ListenError(c.listen, "socket_owner: no user named '\(c.socketOwner)'", isConfiguration: true)
            }
        }
        if !c.socketGroup.isEmpty {
            if let n = UInt32(c.socketGroup) {
                gid = n
            } else if let gr = getgrnam(c.socketGroup) {
                gid = gr.pointee.gr_gid
            } else {
                throw ListenError(c.listen, "socket_group: no group named '\(c.socketGroup)'", isConfiguration: true)
            }
        }
        return (uid, gid)
    }

    // MARK: - TCP

    static func openTCP(host: String, port: UInt16, _ c: ServerConfiguration, backlog: Int) throws(ListenError) -> ListeningSocket {
        let address = ListenAddress.tcp(host: host, port: port)
        let v6 = host.contains(":")
        let fd = try makeSocket(v6 ? AF_INET6 : AF_INET, address)
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var rc: Int32
        if v6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = port.bigEndian
            _ = inet_pton(AF_INET6, host, &sa.sin6_addr)
            rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = port.bigEndian
            _ = inet_pton(AF_INET, host, &sa.sin_addr)
            rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard rc == 0 else {
            let e = Errno.current
            _ = Glibc.close(fd)
            throw ListenError(address, "bind: \(Errno.text(e))")
        }
        guard listen(fd, Int32(backlog)) == 0 else {
            let e = Errno.current
            _ = Glibc.close(fd)
            throw ListenError(address, "listen: \(Errno.text(e))")
        }
        return ListeningSocket(fd: fd, address: address, backlog: backlog, boundFile: nil)
    }

    /// A close-on-exec stream socket at fd 3 or above (fd 0 is where workers get it; the master's
    /// own 0...2 stay its stdin, stdout and stderr).
    static func makeSocket(_ family: Int32, _ address: ListenAddress) throws(ListenError) -> Int32 {
        var fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw ListenError(address, "socket: \(Errno.text(Errno.current))") }
        if fd < 3 {
            let moved = fcntl(fd, F_DUPFD_CLOEXEC, 3)
            _ = Glibc.close(fd)
            guard moved >= 0 else { throw ListenError(address, "fcntl: \(Errno.text(Errno.current))") }
            fd = moved
        }
        return fd
    }
}

/// The master could not listen. `isConfiguration`: the settings name something that does not exist
/// (an unknown user or group); otherwise the system refused (address in use, permissions).
public struct ListenError: Error, Sendable, CustomStringConvertible {
    public var address: ListenAddress
    public var reason: String
    public var isConfiguration: Bool

    init(_ address: ListenAddress, _ reason: String, isConfiguration: Bool = false) {
        self.address = address
        self.reason = reason
        self.isConfiguration = isConfiguration
    }

    public var description: String { "cannot listen on \(address): \(reason)" }
}
