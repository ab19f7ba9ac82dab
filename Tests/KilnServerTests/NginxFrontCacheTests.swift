import Glibc
import Testing
import KilnModel
import KilnPOSIX
@testable import KilnServer

/// `NginxFrontCache`: which files of an nginx cache folder a purge removes, in a folder laid out
/// as nginx's `levels=1:2` lays it out, with files that begin as nginx's do (a binary header,
/// `KEY: …`, then the answer's header as kiln sent it).
@Suite struct NginxFrontCacheTests {
    static func makeFolder() throws -> String {
        var template = Array("/tmp/kiln-front-test-XXXXXX".utf8CString)
        let made = try #require(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) })
        return String(cString: made)
    }

    /// A file as nginx writes it for `uri`, whose answer carries `tags` in an xkey header.
    static func write(_ folder: String, _ name: String, uri: String, tags: [String]) throws {
        let level1 = folder + "/" + String(name.suffix(1))
        let level2 = level1 + "/" + String(name.suffix(3).prefix(2))
        mkdir(level1, 0o700)
        mkdir(level2, 0o700)
        var bytes = [UInt8](repeating: 7, count: 300)  // nginx's binary header
        bytes += Array("\nKEY: GET\(uri)\nStatus: 200 OK\r\nContent-Type: image/jpeg\r\nxkey: \(tags.joined(separator: " "))\r\n\r\n".utf8)
        bytes += [UInt8](repeating: 0xFF, count: 4000)  // the image
        try Files.write(bytes, to: level2 + "/" + name)
    }

    static func countFiles(_ path: String) -> Int {
        guard let dir = opendir(path) else { return 0 }
        defer { closedir(dir) }
        var n = 0
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            guard name != "." && name != ".." else { continue }
            var st = stat()
            guard lstat(path + "/" + name, &st) == 0 else { continue }
            n += (st.st_mode & S_IFMT) == S_IFDIR ? countFiles(path + "/" + name) : 1
        }
        return n
    }

    @Test func aPurgeOfOneSourceRemovesItsAnswersOnly() throws {
        let folder = try Self.makeFolder()
        defer { _ = NginxFrontCache(path: folder).purgeAll(); rmdir(folder) }
        let cat = SourceTag(sourcePath: "photos/cat.jpg"), dog = SourceTag(sourcePath: "photos/dog.jpg")
        try Self.write(folder, "0a1b2c3d4e5f60718293a4b5c6d7e8f1", uri: "/w:300/photos/cat.jpg", tags: [cat.headerValue])
        try Self.write(folder, "1a1b2c3d4e5f60718293a4b5c6d7e8a2", uri: "/w:400/photos/cat.jpg", tags: [cat.headerValue, "kiln-preset-hero"])
        try Self.write(folder, "2a1b2c3d4e5f60718293a4b5c6d7e8b2", uri: "/w:300/photos/dog.jpg", tags: [dog.headerValue])
        // A URL that spells cat's tag with one more hex digit is not cat's answer.
        try Self.write(folder, "3a1b2c3d4e5f60718293a4b5c6d7e8c3", uri: "/w:1/x.jpg", tags: [cat.headerValue + "0"])
        let removal = NginxFrontCache(path: folder).purge(tag: cat)
        #expect(removal.files == 2 && removal.failed == 0)
        #expect(removal.bytes > 8000)
        #expect(Self.countFiles(folder) == 2)
        #expect(NginxFrontCache(path: folder).purge(tag: cat).files == 0)
        #expect(NginxFrontCache(path: folder).purgeAll().files == 2)
        #expect(Self.countFiles(folder) == 0)
    }

    @Test func aMissingFolderIsNothingToPurge() {
        let removal = NginxFrontCache(path: "/tmp/kiln-no-such-front-cache-folder").purgeAll()
        #expect(removal == NginxFrontCache.Removal())
    }

    @Test func theSettingTakesAnAbsoluteFolderOrNothing() throws {
        #expect(try PurgeConfiguration(ConfigValues(["purge.nginx_cache": "/var/cache/nginx/kiln"])).nginxCache == "/var/cache/nginx/kiln")
        #expect(try PurgeConfiguration(ConfigValues()).nginxCache == "")
        #expect(throws: ConfigError.self) { _ = try PurgeConfiguration(ConfigValues(["purge.nginx_cache": "relative/path"], origin: "test")) }
    }
}
