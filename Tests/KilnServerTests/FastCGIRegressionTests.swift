import Foundation
import KilnServer
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI

/// Replays Tests/fuzz-regressions/FuzzFastCGI/ (inputs of the FastCGI record reader harness,
/// Fuzz/Sources/FuzzFastCGI): fed whole or one byte at a time, each gives the same requests and
/// the same verdict, never a trap.
@Suite struct FastCGIRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz-regressions/FuzzFastCGI")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    struct Run: Equatable {
        var requests: [FastCGIRequest] = []
        var failed = false
        var closed = false
    }

    static func run(_ bytes: [UInt8], piece: Int) -> Run {
        var parser = FastCGIRequestParser()
        var result = Run()
        var offset = 0
        repeat {
            let end = min(bytes.count, offset + piece)
            var chunk = Array(bytes[offset..<end])
            offset = end
            while true {
                do {
                    let out = try parser.feed(chunk)
                    chunk = []
                    if out.close { result.closed = true; return result }
                    guard let request = out.request else { break }
                    result.requests.append(request)
                } catch {
                    result.failed = true
                    return result
                }
            }
        } while offset < bytes.count
        return result
    }

    @Test func theFolderHasInputs() {
        #expect(!Self.names.isEmpty)
    }

    @Test(arguments: names)
    func replays(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.folder.appendingPathComponent(name)))
        let whole = Self.run(bytes, piece: bytes.count)
        #expect(whole == Self.run(bytes, piece: 1))
        // These inputs are malformed (a lying length, records out of place): none yields a request.
        #expect(whole.requests.isEmpty)
    }
}
