import KilnHTTP
import CKilnProcessShims
import Glibc
import KilnModel
import KilnPOSIX

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
        guard fd >= 0 else { throw ServerStartError("memfd_create: \(Errno.text(Errno.current))") }
        do throws(SystemError) {
            try FileDescriptorIO.writeAll(fd, encode(values))
        } catch {
            close(fd)
            throw ServerStartError("cannot write the settings snapshot: \(Errno.text(error.code))")
        }
        _ = kiln_seal(fd)
        return fd
    }

    /// Reads the snapshot a worker inherited on `fd` and closes it. Reads at offset 0 (`pread`):
    /// the descriptor's offset is shared with the master, which left it at the end.
    public static func read(fd: Int32) throws(ConfigError) -> ConfigValues {
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw .unreadable("settings snapshot on fd \(fd): \(Errno.text(Errno.current))") }
        var bytes = [UInt8](repeating: 0, count: Int(st.st_size))
        let read = bytes.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try FileDescriptorIO.readFully(fd, into: raw, offset: 0) }
        }
        switch read {
        case .success(let n): bytes.removeSubrange(n...)
        case .failure(let error): throw .unreadable("settings snapshot on fd \(fd): \(Errno.text(error.code))")
        }
        return try decode(bytes)
    }
}
