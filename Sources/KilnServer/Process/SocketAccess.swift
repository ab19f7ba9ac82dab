import Glibc
import KilnPOSIX

/// Who may connect to the master's unix socket: its owner, group and mode, and whether nginx's
/// workers can. Logged at start, so a socket that locks nginx out (mode 0660 with no
/// `server.socket_group`, a folder nginx cannot search) is a warning in kiln's log rather than
/// a 502 and "connect() ... (13: Permission denied)" in nginx's.
///
/// nginx's user is `www-data` where that account exists (Debian's packaged nginx), else
/// `nobody` (nginx started as root without a `user` directive).
struct SocketAccess {
    var path: String
    var owner: String
    var group: String
    var mode: UInt32
    /// The account nginx's workers are assumed to run as, and whether it can connect.
    var nginxUser: String?
    var nginxCanConnect: Bool

    /// The socket at `path` as it is now; nil when it cannot be read.
    init?(path: String) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return nil }
        self.path = path
        owner = SocketAccess.userName(st.st_uid)
        group = SocketAccess.groupName(st.st_gid)
        mode = UInt32(st.st_mode) & 0o777
        let account = SocketAccess.nginxAccount()
        nginxUser = account?.0
        if let account {
            nginxCanConnect = SocketAccess.canConnect(path: path, uid: account.1, groups: SocketAccess.groups(of: account.0, primary: account.2))
        } else {
            nginxCanConnect = true
        }
    }

    /// `www-data` where it exists, else `nobody`: name, uid and primary group.
    static func nginxAccount() -> (String, uid_t, gid_t)? {
        for name in ["www-data", "nobody"] {
            if let pw = getpwnam(name) { return (name, pw.pointee.pw_uid, pw.pointee.pw_gid) }
        }
        return nil
    }

    /// `socket /run/kiln/kiln.sock: owner root, group www-data, mode 0660`.
    var line: String {
        "socket \(path): owner \(owner), group \(group), mode 0\(String(mode, radix: 8))"
            + (nginxUser.map { nginxCanConnect ? "; nginx's workers (\($0)) can connect" : "" } ?? "")
    }

    /// The warning when nginx's workers cannot connect, naming the settings that fix it.
    var warning: String? {
        guard let user = nginxUser, !nginxCanConnect else { return nil }
        return "nginx's workers, which run as \(user) (Debian's nginx user, or nobody), cannot connect to \(path) (\(owner):\(group), mode 0\(String(mode, radix: 8))), "
            + "and every image request will be a 502: set server.socket_group = \"\(user)\" (--socket-group \(user)) with mode 0660, "
            + "or server.socket_mode = 0666 in a folder only nginx and kiln can search, and let \(user) search every folder above the socket"
    }

    /// Whether an account may connect: search permission on every folder above the socket, and
    /// write permission on the socket itself (connect(2) on a unix socket asks for both).
    static func canConnect(path: String, uid: uid_t, groups: [gid_t]) -> Bool {
        if uid == 0 { return true }
        var folders: [String] = []
        var current = path
        while let slash = current.lastIndex(of: "/"), slash != current.startIndex {
            current = String(current[..<slash])
            folders.append(current)
        }
        for folder in folders {
            var st = stat()
            guard stat(folder, &st) == 0, allows(st, uid: uid, groups: groups, bit: 0o1) else { return false }
        }
        var st = stat()
        return lstat(path, &st) == 0 && allows(st, uid: uid, groups: groups, bit: 0o2)
    }

    /// The owner's, group's or others' bit of `st`, in that precedence, as the kernel checks.
    static func allows(_ st: stat, uid: uid_t, groups: [gid_t], bit: UInt32) -> Bool {
        let mode = UInt32(st.st_mode)
        if st.st_uid == uid { return mode & (bit << 6) != 0 }
        if groups.contains(st.st_gid) { return mode & (bit << 3) != 0 }
        return mode & bit != 0
    }

    /// The account's primary and supplementary groups.
    static func groups(of user: String, primary: gid_t) -> [gid_t] {
        var count: Int32 = 64
        var list = [gid_t](repeating: 0, count: Int(count))
        if getgrouplist(user, primary, &list, &count) < 0 {
            list = [gid_t](repeating: 0, count: Int(max(count, 1)))
            guard getgrouplist(user, primary, &list, &count) >= 0 else { return [primary] }
        }
        return Array(list.prefix(Int(count)))
    }

    static func userName(_ uid: uid_t) -> String {
        getpwuid(uid).flatMap { String(validatingCString: $0.pointee.pw_name) } ?? String(uid)
    }

    static func groupName(_ gid: gid_t) -> String {
        getgrgid(gid).flatMap { String(validatingCString: $0.pointee.gr_name) } ?? String(gid)
    }
}
