import CKilnShims
import Glibc
import KilnCore

/// The settings the master validated, handed to its workers on an inherited descriptor, so a worker
/// never reads a configuration file the master has not checked. (Without it, a worker started
/// after someone edited the file, to replace a crashed or recycled one, would run the edited
/// settings before any SIGHUP, or fail on them.)
///
/// Encoding: `key NUL value NUL origin NUL` per setting, sorted by key.
public enum SettingsSnapshot {
    /// The descriptor number workers find the snapshot at.
    public static let workerFD: Int32 = 3

    public static func encode(_ values: ConfigValues) -> [UInt8] {
        var out: [UInt8] = []
        for key in values.values.keys.sorted() {
            for field in [key, values.values[key] ?? "", values.origins[key] ?? ""] {
                out += field.utf8.filter { $0 != 0 }
                out.append(0)
            }
        }
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws(ConfigError) -> ConfigValues {
        let fields = bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast()
        guard fields.count % 3 == 0, bytes.last == 0 || bytes.isEmpty else {
            throw .unreadable("the settings snapshot from the master is damaged")
        }
        var values = ConfigValues()
        var i = fields.startIndex
        while i < fields.endIndex {
            let key = String(decoding: fields[i], as: UTF8.self)
            let value = String(decoding: fields[i + 1], as: UTF8.self)
            let origin = String(decoding: fields[i + 2], as: UTF8.self)
            values.merge([key: value], origin: origin)
            i += 3
        }
        return values
    }

    /// A sealed in-memory file (memfd) holding the encoded settings, close-on-exec, at fd 4 or
    /// above (so spawning can put the listening socket on 0 and this on 3 in either order).
    public static func makeFile(_ values: ConfigValues) throws -> Int32 {
        let fd = kiln_settings_memfd()
        guard fd >= 0 else { throw ServerStartError("memfd_create: \(errnoText(errno))") }
        let bytes = encode(values)
        var off = 0
        while off < bytes.count {
            let n = bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress! + off, $0.count - off, off_t(off)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let e = errno
                close(fd)
                throw ServerStartError("cannot write the settings snapshot: \(errnoText(e))")
            }
            off += n
        }
        _ = kiln_seal(fd)
        return fd
    }

    /// Reads the snapshot a worker inherited on `fd` and closes it.
    public static func read(fd: Int32) throws(ConfigError) -> ConfigValues {
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16_384)
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(bytes.count)) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw .unreadable("settings snapshot on fd \(fd): \(errnoText(errno))") }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        return try decode(bytes)
    }
}
