import Foundation
import Testing
import KilnTestSupport
import Logging
import KilnModel
import KilnPOSIX
@testable import KilnOrigins
@testable import KilnPipeline

/// Resumable downloads of remote sources (`PartialDownload`, `HTTPFetcher.ContentRange`) and the
/// files the workers share about them (`SharedOriginFiles`). The HTTP side is exercised against a
/// real origin in Tests/integration/test_remote_fetch.py.
@Suite struct PartialDownloadTests {
    static let url = "http://127.0.0.1:9/a.jpg"

    static func partial(bytes: Int = 100, total: Int? = 300, etag: String? = "\"v1\"") -> PartialDownload {
        PartialDownload(url: url, etag: etag, lastModified: "Tue, 14 Nov 2023 22:13:20 GMT", bytes: bytes, total: total)
    }

    static func answer(_ range: String?, body: Int, etag: String? = "\"v1\"") -> HTTPFetcher.Response {
        HTTPFetcher.Response(status: 206, body: [UInt8](repeating: 7, count: body), etag: etag, contentRange: range)
    }

    @Test func contentRangesParse() {
        #expect(HTTPFetcher.ContentRange("bytes 100-299/300") == .init(first: 100, last: 299, total: 300))
        #expect(HTTPFetcher.ContentRange("bytes 0-0/*") == .init(first: 0, last: 0, total: nil))
        for bad in ["bytes 100-299/299", "bytes 300-100/400", "bytes */300", "items 0-1/2", "bytes -1-2/3", "bytes 1-2", "bytes 1 - 2/3", ""] {
            #expect(HTTPFetcher.ContentRange(bad) == nil, "\(bad)")
        }
    }

    @Test func aResumeAsksForTheRestWithTheStrongestValidator() {
        let p = Self.partial()
        #expect(p.resumeHeaders.map { "\($0.name): \($0.value)" } == ["Range: bytes=100-", "If-Range: \"v1\""])
        // A weak ETag cannot be used with If-Range: the date is.
        let weak = Self.partial(etag: "W/\"v1\"")
        #expect(weak.resumeHeaders.last?.value == "Tue, 14 Nov 2023 22:13:20 GMT")
        // Without any validator nothing is kept.
        let none = HTTPFetcher.Response(status: 200, body: [1, 2, 3], contentLength: 10)
        #expect(PartialDownload(url: Self.url, interrupted: none) == nil)
        let kept = HTTPFetcher.Response(status: 200, body: [1, 2, 3], etag: "\"v1\"", contentLength: 10)
        #expect(PartialDownload(url: Self.url, interrupted: kept)?.bytes == 3)
        #expect(PartialDownload(url: Self.url, interrupted: HTTPFetcher.Response(status: 206, body: [1], etag: "\"v1\"")) == nil)
    }

    @Test func only206sThatContinueTheDownloadExactlyAreAccepted() {
        let p = Self.partial()
        #expect(p.mismatch(Self.answer("bytes 100-299/300", body: 200), interrupted: false) == nil)
        #expect(p.mismatch(Self.answer("bytes 100-299/300", body: 50), interrupted: true) == nil)
        #expect(p.mismatch(Self.answer("bytes 100-299/300", body: 50), interrupted: false) != nil)
        #expect(p.mismatch(Self.answer("bytes 200-299/300", body: 100), interrupted: false) != nil)   // another start
        #expect(p.mismatch(Self.answer("bytes 100-399/400", body: 300), interrupted: false) != nil)   // another total
        #expect(p.mismatch(Self.answer("bytes 100-199/300", body: 100), interrupted: false) != nil)   // not to the end
        #expect(p.mismatch(Self.answer("bytes 100-299/*", body: 200), interrupted: false) != nil)
        #expect(p.mismatch(Self.answer(nil, body: 200), interrupted: false) != nil)
        #expect(p.mismatch(Self.answer("bytes 100-299/300", body: 200, etag: "\"v2\""), interrupted: false) != nil)
        let kept = [UInt8](repeating: 1, count: 100)
        #expect(p.completes(kept, with: [UInt8](repeating: 2, count: 200), total: 300)?.count == 300)
        #expect(p.completes(kept, with: [UInt8](repeating: 2, count: 199), total: 300) == nil)
    }

    @Test func sidecarsRoundTripAndRefuseGarbage() {
        let p = Self.partial()
        #expect(PartialDownload(lines: p.lines) == p)
        #expect(PartialDownload(lines: Self.partial(total: nil).lines)?.total == nil)
        var lines = p.lines
        lines[4] = "400"   // more bytes than the total
        #expect(PartialDownload(lines: lines) == nil)
        #expect(PartialDownload(lines: Array(p.lines.dropLast())) == nil)
    }

    @Test func partialFilesAreTrustedUpToTheirSidecarAndSweptByAge() throws {
        let dir = CachingFixtures.folder("partial")
        defer { CachingFixtures.remove(dir) }
        let files = SharedOriginFiles(path: dir)
        let id = SharedOriginFiles.id("origin-a/a.jpg")
        let first = [UInt8](repeating: 1, count: 100), second = [UInt8](repeating: 2, count: 50)
        #expect(files.startPartial(Self.partial(), bytes: first, id))
        #expect(files.extendPartial(Self.partial(), with: second, id))
        let (meta, bytes) = try #require(files.partial(id))
        #expect(meta.bytes == 150 && bytes == first + second)
        // A .part shorter than its sidecar says (a crash mid-append) is not used.
        truncate(files.side.partPath(id), 120)
        #expect(files.partial(id) == nil)

        let version = SharedVersion(identity: SourceIdentity(size: 300, mtimeNanoseconds: 5, inode: 0, validator: "\"v1\""),
                                    etag: "\"v1\"", lastModified: nil, checkedAt: 1234)
        #expect(files.write(version, id, sourcePath: "origin-a/a.jpg"))
        #expect(files.version(id, sourcePath: "origin-a/a.jpg") == version)
        #expect(files.version(id, sourcePath: "origin-a/b.jpg") == nil, "the record names its source")

        // Entries' statistics do not see these files; the sweep removes partials by age, records later.
        let disk = DiskCache(path: dir, logger: Logger(label: "test"))
        #expect(disk.stats().entries == 0)
        let soon = WallClock.milliseconds() + Int64(disk.staleAge * 1000) + 60_000
        _ = disk.sweeper.sweep(maxBatch: 100, nowMs: soon)
        #expect(!FileManager.default.fileExists(atPath: files.side.partPath(id)))
        #expect(!FileManager.default.fileExists(atPath: files.side.metaPath(id)))
        #expect(files.version(id, sourcePath: "origin-a/a.jpg") != nil)
        _ = disk.sweeper.sweep(maxBatch: 100, nowMs: soon + Int64(SourceSideFiles.recordAge * 1000))
        #expect(files.version(id, sourcePath: "origin-a/a.jpg") == nil)
    }
}

/// Where `SharedOriginSource` goes in the pipeline.
@Suite struct SharedOriginWiringTests {
    @Test func remoteOriginalsAreKeptWithADiskCacheWhateverTheStore() throws {
        let dir = CachingFixtures.folder("wiring")
        defer { CachingFixtures.remove(dir) }
        let origin = try #require(Origin(name: "o", baseURL: "http://127.0.0.1:9/base"))
        let remote = RemoteSource(origin: origin, fetcher: HTTPFetcher(connectTimeout: 1, timeout: 1, maxRedirects: 0, maxBytes: 1000),
                                  policy: OriginAddressPolicy(), revalidateAfter: 60)
        let local = MemorySource()
        let router = SourceRouter(local: local, remotes: [remote])
        let disk = DiskCache(path: dir, logger: Logger(label: "test"))
        var stages = try PipelineStages.standard(source: router)
        stages.sourceSharing = OriginSharing(router: router)
        let pipeline = ImagePipeline(stages: stages)
        for store in [CacheConfiguration.Store.final, .original, .both] {
            let shared = try #require(pipeline.keepingOriginals(in: disk, store: store).stages.source as? SharedOriginSource)
            // Local sources follow cache.store.
            #expect((shared.local is CachingSource) == (store != .final))
        }
        // Without a disk cache: each worker's RemoteSource as before.
        #expect(pipeline.keepingOriginals(in: nil, store: CacheConfiguration.Store.both) === pipeline)
    }

    /// The builder hands the stage's sharing over with the stage: no origins, no sharing.
    @Test func theBuilderMakesTheSharingWithTheStage() throws {
        var origins = OriginConfiguration()
        #expect(try OriginSources(origins, maxFileBytes: 1000).sourceStage(local: MemorySource(), renderTimeout: 0).sharing == nil)
        origins.origins = [try #require(Origin(name: "o", baseURL: "http://127.0.0.1:9/base"))]
        let built = try OriginSources(origins, maxFileBytes: 1000).sourceStage(local: MemorySource(), renderTimeout: 0)
        #expect(built.sharing is OriginSharing && built.activity is OriginTraffic && built.source is SourceRouter)
    }
}
