import Foundation
import Testing
import KilnModel
@testable import KilnPipeline

@Suite struct FileSourceTests {
    /// A root with a file, a folder, a symlink inside and a symlink leaving the root.
    func makeRoot() throws -> (root: String, outside: String) {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-fs-\(UUID().uuidString)").path
        let root = base + "/root"
        try FileManager.default.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: root + "/sub/a.bin"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: base + "/outside.txt"))
        try FileManager.default.createSymbolicLink(atPath: root + "/inside-link", withDestinationPath: root + "/sub/a.bin")
        try FileManager.default.createSymbolicLink(atPath: root + "/escape", withDestinationPath: base + "/outside.txt")
        try FileManager.default.createSymbolicLink(atPath: root + "/escape-dir", withDestinationPath: base)
        return (root, base)
    }

    @Test func loadsFilesWithIdentity() throws {
        let (root, _) = try makeRoot()
        let source = try FileSource(root: root, maxFileBytes: 100)
        let image = try source.load("sub/a.bin")
        #expect(image.data == [1, 2, 3, 4])
        #expect(image.identity.size == 4)
        #expect(image.identity == (try source.identity(of: "sub/a.bin")))
        #expect(try source.load("inside-link").data == [1, 2, 3, 4])
    }

    @Test func symlinksLeavingTheRootAreForbidden() throws {
        let (root, _) = try makeRoot()
        let source = try FileSource(root: root, maxFileBytes: 100)
        #expect(throws: LoadError.forbidden("source path leaves the root")) { try source.load("escape") }
        #expect(throws: LoadError.forbidden("source path leaves the root")) { try source.load("escape-dir/outside.txt") }
    }

    @Test func missingFilesAndFoldersAreNotFound() throws {
        let (root, _) = try makeRoot()
        let source = try FileSource(root: root, maxFileBytes: 100)
        #expect(throws: LoadError.self) { try source.load("nope.jpg") }
        do { _ = try source.load("sub") } catch let e {
            guard case .notFound = e else { Issue.record("folder gave \(e)"); return }
        }
    }

    @Test func filesOverTheLimitAreRefused() throws {
        let (root, _) = try makeRoot()
        let source = try FileSource(root: root, maxFileBytes: 3)
        #expect(throws: LoadError.tooLarge("source is 4 bytes, over the limit of 3")) { try source.load("sub/a.bin") }
    }

    @Test func identityChangesWhenTheFileChanges() throws {
        let (root, _) = try makeRoot()
        let source = try FileSource(root: root, maxFileBytes: 100)
        let before = try source.identity(of: "sub/a.bin")
        try Data([9, 9, 9, 9, 9]).write(to: URL(fileURLWithPath: root + "/sub/a.bin"))
        #expect(try source.identity(of: "sub/a.bin") != before)
    }

    @Test func rootMustExist() {
        #expect(throws: LoadError.self) { try FileSource(root: "/nonexistent/kiln-root", maxFileBytes: 1) }
    }
}
