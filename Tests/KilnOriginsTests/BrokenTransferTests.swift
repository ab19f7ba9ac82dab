import Foundation
import Testing
@testable import KilnOrigins
@testable import KilnPipeline
import KilnModel
import KilnTestSupport

/// Transfers whose bodies cannot be trusted (issue 25): a body without a provable end is accepted
/// only when the image's structure shows it whole; failures are shared through the cache folder;
/// the settings that keep a worker out of origin fetches.
@Suite struct BrokenTransferTests {
    static let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0]
        + [0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 0x01, 0] + [0x3B]

    func remote(negativeTTL: Double = 10) throws -> RemoteSource {
        let origin = try #require(Origin(name: "o", baseURL: "http://127.0.0.1:9/base"))
        return RemoteSource(origin: origin, fetcher: HTTPFetcher(connectTimeout: 1, timeout: 1, maxRedirects: 0, maxBytes: 1000),
                            policy: OriginAddressPolicy(), revalidateAfter: 60, negativeTTL: negativeTTL)
    }

    @Test func aCloseDelimitedBodyIsAcceptedOnlyWhenItsStructureIsWhole() throws {
        let source = try remote()
        let whole = HTTPFetcher.Response(status: 200, body: Self.gif, etag: "\"e\"", delimited: false)
        #expect(throws: Never.self) { try source.accept(whole, path: "a.gif", checkedAt: 0) }
        let cut = HTTPFetcher.Response(status: 200, body: Array(Self.gif.dropLast()), etag: "\"e\"", delimited: false)
        #expect(throws: LoadError.self) { try source.accept(cut, path: "b.gif", checkedAt: 0) }
        // Remembered (source.negative_ttl), like any other origin failure.
        #expect(source.remembers("b.gif"))
        // With a Content-Length (or chunked), the transfer itself proved the end.
        let delimited = HTTPFetcher.Response(status: 200, body: Array(Self.gif.dropLast()), contentLength: Self.gif.count - 1)
        #expect(throws: Never.self) { try source.accept(delimited, path: "c.gif", checkedAt: 0) }
    }

    @Test func aSharedFailureRoundTripsThroughItsFile() throws {
        let dir = CachingFixtures.folder("failure")
        defer { CachingFixtures.remove(dir) }
        let files = SharedOriginFiles(path: dir)
        let id = SharedOriginFiles.id("o/a.jpg")
        let failure = SharedFailure(error: .upstream("origin o sent 10 of 20 bytes\nthen: cut"), until: 1_700_000_000_000, resumes: 1)
        #expect(files.write(failure, id, sourcePath: "o/a.jpg"))
        let read = try #require(files.failure(id, sourcePath: "o/a.jpg"))
        #expect(read == SharedFailure(error: .upstream("origin o sent 10 of 20 bytes then: cut"), until: 1_700_000_000_000, resumes: 1))
        #expect(files.failure(id, sourcePath: "o/other.jpg") == nil, "the record names its source")
        for error in [LoadError.notFound("n"), .tooLarge("t"), .upstreamTimeout("u"), .io("i"), .forbidden("f")] {
            files.write(SharedFailure(error: error, until: 1, resumes: 0), id, sourcePath: "o/a.jpg")
            #expect(files.failure(id, sourcePath: "o/a.jpg")?.error == error)
        }
        // The purge removes it with the source's other files.
        _ = files.side.remove(sourcePath: "o/a.jpg")
        #expect(files.failure(id, sourcePath: "o/a.jpg") == nil)
    }

    @Test func fetchWorkersDefaultToAllButOne() {
        var c = OriginConfiguration()
        #expect(c.fetchWorkers(workers: 1) == 0, "a single worker: no limit")
        #expect(c.fetchWorkers(workers: 2) == 1)
        #expect(c.fetchWorkers(workers: 8) == 7)
        c.fetchWorkersMax = 3
        #expect(c.fetchWorkers(workers: 8) == 3)
        #expect(c.fetchWorkers(workers: 3) == 0, "as many as there are workers: no limit")
        #expect(c.originLimits(workers: 4).fetchWorkers == 3 && !c.originLimits(workers: 4).isUnlimited)
        c.originConcurrency = 0
        #expect(c.originLimits(workers: 1).isUnlimited)
    }
}
