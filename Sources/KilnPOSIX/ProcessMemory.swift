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
