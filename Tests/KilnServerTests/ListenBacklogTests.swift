import Glibc
import Testing
@testable import KilnServer

/// Issue 25, item 5: the listen queue defaults to the kernel's maximum (a burst waits there for
/// the master's 503s instead of finding the queue full, which nginx reports as a 502), and a
/// configured length above `net.core.somaxconn` is cut to it, visibly.
@Suite(.serialized) struct ListenBacklogTests {
    @Test func theKernelLimitIsRead() {
        #expect(ListenBacklog.parse(Array("4096\n".utf8)) == 4096)
        #expect(ListenBacklog.parse(Array("128".utf8)) == 128)
        for bad in ["", "\n", "x", "0\n", "-1\n", "12345678901\n"] {
            #expect(ListenBacklog.parse(Array(bad.utf8)) == nil, "\(bad)")
        }
        #expect(ListenBacklog.kernelLimit(path: "/nonexistent/somaxconn") == nil)
    }

    @Test func theDefaultIsTheKernelsMaximum() {
        let limit = ListenBacklog.kernelLimit()
        #expect(ServerConfiguration().backlog == min(limit ?? ListenBacklog.assumedLimit, 65_535))
        // Far above the 64 that overflowed behind nginx (php-fpm asks for 511).
        #expect(ServerConfiguration().backlog >= 128)
        #expect(ServerConfiguration.Key.backlog.defaultText == "`net.core.somaxconn`")
    }

    @Test func aLongerQueueIsCutToTheKernelsLimit() {
        let cases: [(Int, Int?, Int, Bool)] = [(64, 4096, 64, false), (4096, 4096, 4096, false), (65_535, 4096, 4096, true),
                                               (900, nil, 900, false)]
        for (configured, limit, backlog, clamped) in cases {
            let got = ListenBacklog.effective(configured: configured, limit: limit)
            #expect(got.backlog == backlog && got.clamped == clamped, "\(configured) under \(String(describing: limit))")
        }
    }

    /// The socket listens with the cut length: it holds that many connections nobody accepts,
    /// then refuses the next at once (EAGAIN: what nginx turns into a 502).
    @Test func theSocketQueuesWhatItWasGiven() throws {
        let dir = try TemporaryFile.folder()
        defer { rmdir(dir) }
        var config = ServerConfiguration()
        config.listen = .unix(path: dir + "/b.sock")
        config.backlog = 65_535
        let socket = try ListeningSocket.open(config, kernelLimit: 8)
        defer { socket.close() }
        #expect(socket.backlog == 8)
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        var refused = false
        for _ in 0..<64 {
            let fd = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            #expect(fd >= 0)
            fds.append(fd)
            var sa = sockaddr_un()
            sa.sun_family = sa_family_t(AF_UNIX)
            let path = Array((dir + "/b.sock").utf8)
            withUnsafeMutableBytes(of: &sa.sun_path) { raw in
                raw.copyBytes(from: path)
                raw[path.count] = 0
            }
            let rc = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc != 0 {
                #expect(errno == EAGAIN)
                refused = true
                break
            }
        }
        #expect(refused)
        // Linux queues backlog + 1 on a unix socket.
        #expect((8...10).contains(fds.count - 1), "\(fds.count - 1) connections queued")
    }
}
