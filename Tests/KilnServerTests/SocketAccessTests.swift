import Glibc
import KilnModel
import KilnPipeline
import Testing
@testable import KilnServer

/// Who may connect to the unix socket (`SocketAccess`), and the start line about the caches
/// (`CacheSummary`).
@Suite struct SocketAccessTests {
    func stat(uid: uid_t, gid: gid_t, mode: UInt32) -> Glibc.stat {
        var st = Glibc.stat()
        st.st_uid = uid
        st.st_gid = gid
        st.st_mode = mode_t(mode)
        return st
    }

    /// The kernel's order: the owner's bits for the owner, else the group's for a member, else others'.
    @Test func permissionBitsInTheKernelsOrder() {
        let socket = stat(uid: 0, gid: 33, mode: 0o140660)
        #expect(SocketAccess.allows(socket, uid: 33, groups: [33], bit: 0o2), "www-data through the group")
        #expect(!SocketAccess.allows(socket, uid: 65534, groups: [65534], bit: 0o2), "nobody is neither")
        #expect(SocketAccess.allows(stat(uid: 0, gid: 0, mode: 0o140666), uid: 65534, groups: [65534], bit: 0o2))
        // The owner's bits decide for the owner, even when the group's would allow.
        #expect(!SocketAccess.allows(stat(uid: 33, gid: 33, mode: 0o140060), uid: 33, groups: [33], bit: 0o2))
    }

    /// Every folder above the socket must be searchable, as connect(2) asks.
    @Test func foldersAboveTheSocketMustBeSearchable() throws {
        var template = Array("/tmp/kiln-socket-access-XXXXXX".utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        let dir = String(cString: made)
        defer { _ = unlink(dir + "/s"); _ = rmdir(dir) }
        let fd = open(dir + "/s", O_CREAT | O_WRONLY, 0o666)
        #expect(fd >= 0)
        close(fd)
        _ = chmod(dir + "/s", 0o666)
        let stranger: uid_t = 65533  // owns nothing here, in no group of ours
        _ = chmod(dir, 0o700)
        #expect(!SocketAccess.canConnect(path: dir + "/s", uid: stranger, groups: [65533]), "a 0700 folder locks others out")
        _ = chmod(dir, 0o711)
        #expect(SocketAccess.canConnect(path: dir + "/s", uid: stranger, groups: [65533]))
        _ = chmod(dir + "/s", 0o660)
        #expect(!SocketAccess.canConnect(path: dir + "/s", uid: stranger, groups: [65533]), "0660 without the group")
        #expect(SocketAccess.canConnect(path: dir + "/s", uid: 0, groups: [0]), "root always")
        let access = try #require(SocketAccess(path: dir + "/s"))
        #expect(access.mode == 0o660 && access.line.hasPrefix("socket \(dir)/s: owner "))
        if access.nginxUser != nil, getuid() == 0 {
            #expect(!access.nginxCanConnect && access.warning?.contains("server.socket_group") == true)
        }
    }

    @Test func cacheSummarySaysWhatMemoryOnlyModeGivesUp() {
        var caching = CacheConfiguration()
        caching.diskPath = ""
        let memoryOnly = CacheSummary.line(caching)
        #expect(memoryOnly.hasPrefix("no disk cache (cache.disk_path is empty)") && memoryOnly.contains("nothing is shared between workers"))
        caching.diskPath = "/var/cache/kiln"
        #expect(CacheSummary.line(caching) == "disk cache /var/cache/kiln, up to 1GiB, shared by every worker; memory cache 64MiB per worker")
    }
}
