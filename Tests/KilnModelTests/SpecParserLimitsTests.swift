import Testing
@testable import KilnModel

/// `limits.max_path_bytes` and `limits.max_options` (issue 9): a 64 KB URL and a URL of
/// thousands of options are refused before anything else is parsed.
@Suite struct SpecParserLimitsTests {
    let parser = SpecParser(maxPathBytes: 8_192, maxOptions: 64)

    @Test func pathOverTheLimitIsMalformed() {
        let path = "/w:100/" + String(repeating: "a", count: 65_536) + ".jpg"
        #expect(throws: SpecError.malformedPath(reason: "path too long: \(path.utf8.count) bytes, at most 8192")) {
            try parser.parse(path)
        }
        #expect(throws: SpecError.self) { try parser.parse(path, isDecoded: true) }
    }

    @Test func pathAtTheLimitParses() throws {
        let prefix = "/w:100/"
        let path = prefix + String(repeating: "b", count: 8_192 - prefix.utf8.count - 4) + ".jpg"
        #expect(path.utf8.count == 8_192)
        #expect(try parser.parse(path).sourcePath.hasSuffix(".jpg"))
    }

    @Test func thousandsOfOptionsStopAtTheLimit() {
        let path = "/" + Array(repeating: "q:80", count: 5_000).joined(separator: "/") + "/a.jpg"
        #expect(throws: SpecError.invalidOption(segment: "option 65", reason: "at most 64 options per URL")) {
            try SpecParser(maxPathBytes: 1 << 20, maxOptions: 64).parse(path)
        }
    }

    @Test func exactlyTheLimitOfOptionsParses() throws {
        let path = "/" + Array(repeating: "q:80", count: 64).joined(separator: "/") + "/a.jpg"
        let request = try parser.parse(path)
        #expect(request.sourcePath == "a.jpg")
        #expect(request.output.quality == 80)
    }

    @Test func presetsCountAsOneOption() throws {
        let p = SpecParser(maxOptions: 2, presets: ["t": "w:10/q:70/f:png/sepia"])
        #expect(try p.parse("/pr:t/gs/a.jpg").output.quality == 70)
        #expect(throws: SpecError.self) { try p.parse("/pr:t/gs/q:1/a.jpg") }
    }
}
