import Glibc
import KilnModel

/// nginx's optional front cache (`nginx/kiln-front-cache.conf`, the folder of its
/// `fastcgi_cache_path`) as a tier a purge reaches (`purge.nginx_cache`), so a purge is immediate
/// there too and the front cache may keep answers for long.
///
/// nginx names its files by the MD5 of its key (the URL), which kiln cannot derive from a source:
/// many URLs (sizes, formats, adapters, presets) show one source. But each file begins with the
/// answer's header as kiln sent it, and kiln's image answers carry the source's tag
/// (`SourceTag.headerValue`, `kiln-src-<32 hex>`) in their surrogate-key headers (on by default:
/// `http.surrogate_key`, `http.xkey`, `http.cache_tag`). So a purge of one source reads the first
/// `headerBytes` of every file and removes those whose header holds the tag; a purge of
/// everything removes every file. nginx treats a file gone from under its keys as a miss and asks
/// kiln again (its next answer is stored anew).
///
/// The walk reads every file's head: about as long as a disk-cache purge for as many entries,
/// done in the master's loop. Folders nginx makes are `0700` for its workers' user: kiln must run
/// as that user (or root) to remove anything; what it may not open is counted, never fatal.
public struct NginxFrontCache: Sendable {
    /// The folder of `fastcgi_cache_path`.
    public let path: String

    /// nginx's file header (its struct, `KEY: …`) and kiln's answer header fit here
    /// (`fastcgi_buffer_size` 16k caps the latter).
    static let headerBytes = 20 * 1024

    /// How deep nginx's `levels=` nest folders (at most three levels).
    static let maxDepth = 3

    public init(path: String) {
        self.path = path
    }

    /// What a purge removed, and the files it could not read or remove.
    public struct Removal: Sendable, Equatable {
        public var files = 0
        public var bytes = 0
        public var failed = 0
    }

    /// Removes every answer to a request for `tag`'s source.
    public func purge(tag: SourceTag) -> Removal {
        let needle = Array(tag.headerValue.utf8)
        return sweep { fd in NginxFrontCache.headerHolds(fd, needle) }
    }

    /// Removes every answer.
    public func purgeAll() -> Removal {
        sweep { _ in true }
    }

    /// Walks the folder and removes the regular files `matches` accepts (given a read descriptor).
    func sweep(_ matches: (Int32) -> Bool) -> Removal {
        var removal = Removal()
        let root = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else {
            removal.failed += errno == ENOENT ? 0 : 1
            return removal
        }
        walk(root, depth: 0, &removal, matches)
        return removal
    }

    /// One folder (takes `dirFD` and closes it).
    private func walk(_ dirFD: Int32, depth: Int, _ removal: inout Removal, _ matches: (Int32) -> Bool) {
        guard let dir = fdopendir(dirFD) else {
            close(dirFD)
            removal.failed += 1
            return
        }
        defer { closedir(dir) }
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name != "." && name != ".." else { continue }
            var st = stat()
            guard fstatat(dirFD, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            switch st.st_mode & S_IFMT {
            case S_IFDIR where depth < NginxFrontCache.maxDepth:
                let sub = openat(dirFD, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                if sub >= 0 { walk(sub, depth: depth + 1, &removal, matches) } else { removal.failed += 1 }
            case S_IFREG:
                let fd = openat(dirFD, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
                guard fd >= 0 else {
                    removal.failed += 1
                    continue
                }
                let hit = matches(fd)
                close(fd)
                guard hit else { continue }
                if unlinkat(dirFD, name, 0) == 0 {
                    removal.files += 1
                    removal.bytes += Int(st.st_size)
                } else if errno != ENOENT {
                    removal.failed += 1
                }
            default:
                continue
            }
        }
    }

    /// Whether the first `headerBytes` of the file hold `needle` as a whole token (not followed by
    /// another hex digit: a tag is 32 hex digits after `kiln-src-`).
    static func headerHolds(_ fd: Int32, _ needle: [UInt8]) -> Bool {
        var head = [UInt8](repeating: 0, count: headerBytes)
        let count = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return false }
        return contains(head[0..<count], needle)
    }

    static func contains(_ haystack: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, haystack.count >= needle.count else { return false }
        var i = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while i <= last {
            if haystack[i] == first && haystack[i..<(i + needle.count)].elementsEqual(needle) {
                let after = i + needle.count
                if after == haystack.endIndex || !isHexDigit(haystack[after]) { return true }
            }
            i += 1
        }
        return false
    }

    static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66)
    }
}
