import Glibc

/// This process's memory, from `/proc/self/statm`.
public enum ProcessMemory {
    /// Resident set size in bytes, nil when `/proc` cannot be read.
    public static func residentBytes() -> Int? {
        guard let bytes = try? Files.read("/proc/self/statm") else { return nil }
        // "size resident shared text lib data dt", in pages.
        let fields = bytes.split(separator: 0x20)
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension ProcessMemory {
    /// Asks the kernel to reclaim the pages of this process's own executable that only this
    /// process maps (`madvise(MADV_PAGEOUT)` over the read-only and executable mappings of
    /// `/proc/self/exe`): after start-up, code and tables that ran once (the command line, the
    /// settings catalog, start-up checks) stop counting in its resident set, and what runs again
    /// faults back in from the file. Pages other processes map are left alone by the kernel, and
    /// written (private) pages are never touched. Returns the bytes of the mappings advised.
    @discardableResult
    public static func releaseExecutablePages() -> Int {
        guard let exe = executablePath(), let maps = try? Files.read("/proc/self/maps") else { return 0 }
        var advised = 0
        for line in maps.split(separator: 0x0A) {
            // "start-end perms offset dev inode   path"
            let fields = line.split(separator: 0x20, omittingEmptySubsequences: true)
            guard fields.count >= 6, String(decoding: fields[5], as: UTF8.self) == exe else { continue }
            let perms = String(decoding: fields[1], as: UTF8.self)
            guard perms == "r-xp" || perms == "r--p" else { continue }
            let range = fields[0].split(separator: 0x2D)
            guard range.count == 2, let start = UInt(String(decoding: range[0], as: UTF8.self), radix: 16),
                  let end = UInt(String(decoding: range[1], as: UTF8.self), radix: 16), end > start,
                  let address = UnsafeMutableRawPointer(bitPattern: start) else { continue }
            if madvise(address, Int(end - start), pageOut) == 0 { advised += Int(end - start) }
        }
        return advised
    }

    /// `MADV_PAGEOUT` (Linux 5.4).
    static let pageOut: Int32 = 21

    /// The target of `/proc/self/exe`.
    static func executablePath() -> String? {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return nil }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
