import Glibc
import KilnPOSIX

/// Small POSIX helpers for the disk cache (no Foundation); the plumbing itself (clocks, sleeps,
/// errno text, full reads and writes) is `KilnPOSIX`'s.
enum CacheFiles {
    /// `mkdir -p`; true when the folder exists afterwards.
    @discardableResult
    static func makeDirectories(_ path: String) -> Bool {
        var st = stat()
        if stat(path, &st) == 0 { return (st.st_mode & S_IFMT) == S_IFDIR }
        var prefix = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + component
            if mkdir(prefix, 0o755) != 0 && Errno.current != EEXIST { return false }
        }
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    /// Reads exactly `buffer.count` bytes at `offset` unless the file ends first; returns the count
    /// read, or -1 on an error.
    static func readFully(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, offset: Int) -> Int {
        do {
            return try FileDescriptorIO.readFully(fd, into: buffer, offset: offset)
        } catch {
            Errno.current = error.code
            return -1
        }
    }

    /// Writes both buffers completely (one `writev` in the common case).
    static func writeFully(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> Bool {
        do {
            try FileDescriptorIO.writeAll(fd, [first, second])
            return true
        } catch {
            Errno.current = error.code
            return false
        }
    }

    /// Names in a folder (without `.` and `..`), nil when it cannot be opened.
    static func list(_ path: String) -> [String]? {
        guard let dir = opendir(path) else { return nil }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Calls `body` with the name and `lstat` of every regular file in a folder (no path walks:
    /// `fstatat` on the folder's descriptor). False when the folder cannot be opened.
    @discardableResult
    static func forEachFile(in path: String, _ body: (String, stat) -> Void) -> Bool {
        guard let dir = opendir(path) else { return false }
        defer { closedir(dir) }
        let fd = dirfd(dir)
        while let entry = readdir(dir) {
            let type = entry.pointee.d_type
            guard type == UInt8(DT_REG) || type == UInt8(DT_UNKNOWN) else { continue }
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            var st = stat()
            guard fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            body(name, st)
        }
        return true
    }

    /// Whether `name` is `count` lowercase hex digits.
    static func isHex(_ name: String, count: Int) -> Bool {
        var n = 0
        for c in name.utf8 {
            guard (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) else { return false }
            n += 1
        }
        return n == count
    }

    /// Bytes a file takes on disk: its allocated blocks (as `du` counts), at least its size.
    static func diskUsage(_ st: stat) -> Int {
        max(Int(st.st_size), Int(st.st_blocks) * 512)
    }

    /// Modification time in nanoseconds.
    static func mtime(_ st: stat) -> Int64 {
        Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec)
    }

    /// Whether the open file `fd` is still the file at `path` (same device and inode).
    static func isSameFile(_ fd: Int32, _ path: String) -> Bool {
        var a = stat(), b = stat()
        guard fstat(fd, &a) == 0, stat(path, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }
}

/// A Fletcher-style checksum over 64-bit words: cheap (a few µs for 30 KB) and sensitive to
/// zeroed, truncated or reordered regions. Not a defence against deliberate tampering.
struct EntryChecksum {
    private var a: UInt64 = 1
    private var b: UInt64 = 0

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let words = bytes.count / 8
        var a = self.a, b = self.b
        for i in 0..<words {
            a &+= UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self))
            b &+= a
        }
        for i in (words * 8)..<bytes.count {
            a &+= UInt64(bytes[i]) &+ 0x100
            b &+= a
        }
        self.a = a
        self.b = b
    }

    var value: UInt64 { a ^ (b << 32 | b >> 32) }
}
