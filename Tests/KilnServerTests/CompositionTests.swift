import Foundation
import Logging
import Testing
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
import KilnPipeline
import KilnCodecs
import KilnModel
@testable import KilnServer

/// A folder with a small PNG (made by the real encoder) and a corrupt one.
struct ImageFolder {
    let root: String
    let cache: String

    init(_ tag: String) throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("kiln-compose-\(tag)-\(UUID().uuidString)").path
        root = base + "/images"
        cache = base + "/cache"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        let pixels = PixelBuffer(width: 8, height: 6, channels: 3, pixels: (0..<144).map { UInt8($0) })
        let png = try Codecs.encoder(for: .png).encode(pixels, options: EncodeOptions(format: .png))
        _ = FileManager.default.createFile(atPath: root + "/a.png", contents: Data(png))
        _ = FileManager.default.createFile(atPath: root + "/b.png", contents: Data(png))
        _ = FileManager.default.createFile(atPath: root + "/bad.png", contents: Data(png.prefix(30)))
    }

    var values: ConfigValues {
        ConfigValues(["source.root": root, "cache.disk_path": cache])
    }

    var configuration: KilnConfiguration {
        get throws { try KilnConfiguration(values) }
    }

    func remove() { try? FileManager.default.removeItem(atPath: (root as NSString).deletingLastPathComponent) }
}

let quietLogger: Logger = {
    var logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
    logger.logLevel = .critical
    return logger
}()

@Suite struct HandlerFactoryTests {
    @Test func echoHandlerOnlyWhenAskedFor() throws {
        let folder = try ImageFolder("echo")
        defer { folder.remove() }
        var values = folder.values
        #expect(try HandlerFactory().makeHandler(try KilnConfiguration(values), quietLogger) is ImageHandler)
        values.merge([DebugConfiguration.Key.echoHandler.key: "true"], origin: "test")
        #expect(try HandlerFactory().makeHandler(try KilnConfiguration(values), quietLogger) is KilnServer.EchoHandler)
    }

    @Test func validateRefusesAMissingRoot() throws {
        #expect(throws: ConfigError.self) {
            try HandlerFactory().validate(KilnConfiguration(ConfigValues(["source.root": "/nonexistent/kiln-root"])))
        }
        let folder = try ImageFolder("validate")
        defer { folder.remove() }
        try HandlerFactory().validate(folder.configuration)
    }

    @Test func theImageHandlerServesThroughThePipelinesCaches() throws {
        let folder = try ImageFolder("serve")
        defer { folder.remove() }
        let handler = try HandlerFactory().makeImageHandler(folder.configuration, quietLogger)
        let first = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        #expect(first.status == 200 && first.header("X-Cache") == "MISS" && first.header("Content-Type") == "image/png")
        let second = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png"))
        #expect(second.header("X-Cache") == "HIT-MEMORY" && second.body == first.body)
        // Another worker: the disk cache.
        let other = try HandlerFactory().makeImageHandler(folder.configuration, quietLogger)
        #expect(other.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png")).header("X-Cache") == "HIT-DISK")
        // A remembered failure keeps its status and message.
        let bad = handler.handle(HTTPRequest(method: "GET", uri: "/bad.png"))
        let again = handler.handle(HTTPRequest(method: "GET", uri: "/bad.png"))
        #expect(bad.status == 422 && bad.header("X-Cache") == "MISS")
        #expect(again.status == 422 && again.header("X-Cache") == "HIT-MEMORY" && again.body == bad.body)
        // If-Modified-Since: the variant (cached, or rendered once) answers, with its ETag; a date
        // later than now is ignored (ConditionalRequestTests).
        let notModified = handler.handle(HTTPRequest(method: "GET", uri: "/w:4/a.png",
                                                     headers: ["if-modified-since": first.header("Last-Modified") ?? ""]))
        #expect(notModified.status == 304 && notModified.header("X-Cache") == "HIT-MEMORY")
        #expect(notModified.header("ETag") == first.header("ETag"))
        #expect(handler.handle(HTTPRequest(method: "GET", uri: "/nope.png")).status == 404)
        #expect(handler.handle(HTTPRequest(method: "POST", uri: "/a.png")).status == 405)
    }
}

extension HandlerFactoryTests {
    @Test func rendersAFileWithTheOutputExtensionsFormat() throws {
        let folder = try ImageFolder("file")
        defer { folder.remove() }
        let configuration = try PipelineConfiguration(ConfigValues())
        let webp = try HandlerFactory().render(file: folder.root + "/a.png", spec: "w:4", outputPath: "/tmp/x.webp",
                                               configuration: configuration)
        #expect(webp.format == .webp && webp.size == PixelSize(width: 4, height: 3))
        let asIs = try HandlerFactory().render(file: folder.root + "/a.png", spec: "-", outputPath: "/tmp/x.out",
                                               configuration: configuration)
        #expect(asIs.format == .png && asIs.size == PixelSize(width: 8, height: 6))
        #expect(throws: LoadError.self) {
            try HandlerFactory().render(file: folder.root + "/none.png", spec: "-", outputPath: "/tmp/x.png",
                                        configuration: configuration)
        }
    }
}

@Suite struct WarmerTests {
    @Test func warmsRendersSkipsAndReportsFailuresInListOrder() throws {
        let folder = try ImageFolder("warm")
        defer { folder.remove() }
        var configuration = try folder.configuration
        configuration.cache.memoryCostLimit = 0
        configuration.cache.memoryCountLimit = 0
        let paths = ["/w:4/a.png", "/missing.png", "/w:4/b.png", "/bad.png"]
        let factory = HandlerFactory()
        let make: @Sendable () throws -> ImageHandler = { [configuration] in try factory.makeImageHandler(configuration, quietLogger) }
        let first = Warmer(paths: paths, logger: quietLogger, makeHandler: make, onProgress: { _ in }).run(jobs: 2)
        #expect(first.rendered == 2 && first.failed == 2 && first.skipped == 0)
        #expect(first.failures.map(\.path) == ["/missing.png", "/bad.png"])
        #expect(first.failures.first?.reason.hasPrefix("HTTP 404") == true)
        let second = Warmer(paths: paths, logger: quietLogger, makeHandler: make, onProgress: { _ in }).run(jobs: 3)
        #expect(second.rendered == 0 && second.skipped == 2 && second.failed == 2)
    }

    @Test func aPipelineThatCannotBeBuiltFailsEveryPath() {
        struct Refused: Error {}
        let tally = Warmer(paths: ["/a.png", "/b.png"], logger: quietLogger, makeHandler: { throw Refused() },
                           onProgress: { _ in }).run(jobs: 2)
        #expect(tally.failed == 2 && tally.rendered == 0)
    }
}

@Suite struct EchoHandlerTests {
    @Test func answersWithThePIDAndPads() {
        let r = KilnServer.EchoHandler().handle(HTTPRequest(method: "GET", uri: "/x?bytes=300"))
        let text = String(decoding: r.body, as: UTF8.self)
        #expect(r.status == 200 && text.hasPrefix("kiln worker \(getpid()): /x?bytes=300"))
        #expect(r.body.count == 300 && r.header("Content-Length") == "300")
        #expect(KilnServer.EchoHandler.number(after: "sleep=", in: "/s?sleep=25&x") == 25)
    }
}
