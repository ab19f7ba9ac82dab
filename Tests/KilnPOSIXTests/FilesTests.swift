import Glibc
import KilnPOSIX
import Testing

/// A fresh folder under /tmp, removed with its files when released.
final class TempFolder {
    let path: String
    init() throws {
        var template = Array("/tmp/kiln-system-test-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        try #require(made != nil)
        path = String(cString: made!)
    }
    var names: [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var out: [String] = []
        while let e = readdir(dir) {
            let name = withUnsafePointer(to: e.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { out.append(name) }
        }
        return out.sorted()
    }
    deinit {
        for name in names { unlink(path + "/" + name) }
        rmdir(path)
    }
}

@Suite struct FilesTests {
    @Test func writeThenReadRoundTrips() throws {
        let folder = try TempFolder()
        let path = folder.path + "/a"
        try Files.write([1, 2, 3], to: path)
        #expect(try Files.read(path) == [1, 2, 3])
        try Files.write([], to: path)
        #expect(try Files.read(path) == [])
    }

    @Test func atomicWriteReplacesTheWholeFileAndLeavesNoTemporary() throws {
        let folder = try TempFolder()
        let path = folder.path + "/pid"
        try Files.write(Array("old contents, longer than the new\n".utf8), to: path)
        // A reader holding the old file keeps the old bytes: the new file is a new inode.
        let oldFD = open(path, O_RDONLY)
        defer { close(oldFD) }
        try Files.writeAtomically(Array("42\n".utf8), to: path, mode: 0o600)
        #expect(try Files.read(path) == Array("42\n".utf8))
        #expect(try FileDescriptorIO.readAll(oldFD) == Array("old contents, longer than the new\n".utf8))
        #expect(folder.names == ["pid"])
        var st = stat()
        #expect(stat(path, &st) == 0 && st.st_mode & 0o777 == 0o600)
    }

    @Test func atomicWriteIntoAMissingFolderFailsAndNamesThePath() throws {
        let folder = try TempFolder()
        let path = folder.path + "/missing/pid"
        #expect(throws: SystemError("cannot create a file beside \(path)", code: ENOENT)) {
            try Files.writeAtomically([1], to: path)
        }
    }

    @Test func atomicWriteOverAFolderFailsAndRemovesItsTemporary() throws {
        let folder = try TempFolder()
        let path = folder.path + "/dir"
        try #require(mkdir(path, 0o755) == 0)
        defer { rmdir(path) }
        #expect(throws: SystemError.self) { try Files.writeAtomically([1], to: path) }
        #expect(folder.names == ["dir"])
    }

    @Test func readingAMissingFileNamesIt() {
        #expect(throws: SystemError("cannot open /nonexistent/kiln", code: ENOENT)) {
            try Files.read("/nonexistent/kiln")
        }
    }
}
