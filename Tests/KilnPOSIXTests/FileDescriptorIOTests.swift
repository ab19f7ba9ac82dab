import Dispatch
import Glibc
import KilnPOSIX
import Testing

@Suite struct FileDescriptorIOTests {
    /// A pipe whose two ends are closed when the test ends.
    final class Pipe {
        var read: Int32 = -1
        var write: Int32 = -1
        init() throws {
            var fds: [Int32] = [0, 0]
            try #require(pipe(&fds) == 0)
            read = fds[0]
            write = fds[1]
        }
        func closeWrite() { if write >= 0 { close(write); write = -1 } }
        deinit {
            if read >= 0 { close(read) }
            closeWrite()
        }
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    /// Runs `body` on a thread of its own (not the cooperative pool: it blocks on the pipe).
    final class Background<T>: @unchecked Sendable {
        private var result: Result<T, any Error>?
        private let done = DispatchSemaphore(value: 0)
        init(_ body: @escaping @Sendable () throws -> T) {
            DispatchQueue.global().async {
                self.result = Result { try body() }
                self.done.signal()
            }
        }
        func value() throws -> T {
            done.wait()
            return try result!.get()
        }
    }

    @Test func readAllGathersPartialReadsUntilEndOfFile() throws {
        let p = try Pipe()
        // More than a pipe buffer (64 KiB) and more than one read chunk, written in odd pieces:
        // reads come back short and in pieces.
        let bytes = Self.pattern(300_000)
        let reader = Background { [r = p.read] in try FileDescriptorIO.readAll(r, chunk: 1000) }
        for start in stride(from: 0, to: bytes.count, by: 7_777) {
            try FileDescriptorIO.writeAll(p.write, Array(bytes[start..<min(start + 7_777, bytes.count)]))
        }
        p.closeWrite()
        #expect(try reader.value() == bytes)
    }

    @Test func writeAllFinishesShortWritesToAFullPipe() throws {
        let p = try Pipe()
        // A blocking write of 1 MB to a 64 KiB pipe completes in many short writes while the
        // reader drains it.
        let bytes = Self.pattern(1_000_000)
        let reader = Background { [r = p.read] in try FileDescriptorIO.readAll(r) }
        try FileDescriptorIO.writeAll(p.write, bytes)
        p.closeWrite()
        #expect(try reader.value() == bytes)
    }

    @Test func vectoredWriteKeepsTheOrderAndSkipsEmptyBuffers() throws {
        let p = try Pipe()
        let a: [UInt8] = [1, 2, 3], b: [UInt8] = [], c: [UInt8] = [4, 5]
        try a.withUnsafeBytes { ra in
            try b.withUnsafeBytes { rb in
                try c.withUnsafeBytes { rc in try FileDescriptorIO.writeAll(p.write, [ra, rb, rc]) }
            }
        }
        p.closeWrite()
        #expect(try FileDescriptorIO.readAll(p.read) == [1, 2, 3, 4, 5])
    }

    @Test func readFullyStopsAtEndOfFileAndReadsAtAnOffset() throws {
        let folder = try TempFolder()
        let path = folder.path + "/f"
        try Files.write(Self.pattern(100), to: path)
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 50)
        let n = try buffer.withUnsafeMutableBytes { try FileDescriptorIO.readFully(fd, into: $0, offset: 80) }
        #expect(n == 20)
        #expect(Array(buffer[0..<20]) == Array(Self.pattern(100)[80...]))
        withExtendedLifetime(folder) {}
    }

    @Test func aClosedDescriptorIsAnErrorWithItsErrno() {
        #expect(throws: SystemError("read", code: EBADF)) { try FileDescriptorIO.readAll(-1) }
        #expect(throws: SystemError("write", code: EBADF)) { try FileDescriptorIO.writeAll(-1, [1]) }
    }
}
