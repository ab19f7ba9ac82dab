import Testing
@testable import KilnModel

@Suite struct SpecParserTests {
    let parser = SpecParser()

    @Test func parsesResizeQualityFormatAndPath() throws {
        let r = try parser.parse("/rs:300:200:fill/q:80/f:webp/photos/cat.jpg")
        #expect(r.sourcePath == "photos/cat.jpg")
        #expect(r.operations == [.resize(ResizeOptions(width: 300, height: 200, mode: .fill))])
        #expect(r.output.quality == 80)
        #expect(r.output.format == .format(.webp))
    }

    @Test func aliasesAndLongNamesHaveOneCanonicalForm() throws {
        let a = try parser.parse("/w:300/f:webp/a.jpg")
        let b = try parser.parse("/resize:300:0:fit/format:webp/-/a.jpg")
        let c = try parser.parse("/width:300/format:webp/a.jpg?x=1")
        #expect(a.canonical == "rs:300:0:fit/f:webp/-/a.jpg")
        #expect(a.canonical == b.canonical)
        #expect(a.canonical == c.canonical)
    }

    @Test func widthAndHeightMergeIntoOneResize() throws {
        let r = try parser.parse("/w:300/h:200/el:1/a.png")
        #expect(r.operations == [.resize(ResizeOptions(width: 300, height: 200, mode: .fit, enlarge: true))])
    }

    @Test func enlargeIsPartOfTheIdentity() throws {
        let plain = try parser.parse("/w:800/a.jpg")
        let enlarged = try parser.parse("/w:800/el:1/a.jpg")
        #expect(plain.canonical != enlarged.canonical)
        #expect(enlarged.canonical == "rs:800:0:fit/el:1/-/a.jpg")
        #expect(try parser.parse("/" + enlarged.canonical) == enlarged)
        #expect(try parser.parse("/w:800/el:0/a.jpg").canonical == plain.canonical)
    }

    @Test func dashEndsOptionsSoFoldersMayLookLikeOptions() throws {
        let r = try parser.parse("/rs:10:10/-/rs:1:1/img.jpg")
        #expect(r.sourcePath == "rs:1:1/img.jpg")
        #expect(r.operations.count == 1)
    }

    @Test func pathWithoutOptions() throws {
        let r = try parser.parse("/photos/2024/cat.jpg")
        #expect(r.operations.isEmpty)
        #expect(r.sourcePath == "photos/2024/cat.jpg")
        #expect(r.output.format == .source)
    }

    @Test func unknownOptionNamesTheSegment() {
        #expect(throws: SpecError.unknownOption(segment: "foo:1")) { try parser.parse("/foo:1/a.jpg") }
    }

    @Test(arguments: ["/rs:abc:1/a.jpg", "/q:0/a.jpg", "/q:101/a.jpg", "/rs:1:1:stretch/a.jpg",
                      "/w:-5/a.jpg", "/f:svg/a.jpg", "/el:2/a.jpg", "/rs:1/a.jpg", "/w:99999/a.jpg"])
    func badArgumentsAreRejected(path: String) {
        #expect(throws: SpecError.self) { try parser.parse(path) }
        do { _ = try parser.parse(path); Issue.record("accepted \(path)") } catch let e {
            guard case .invalidOption(let segment, _) = e else { Issue.record("wrong error \(e)"); return }
            #expect(path.contains(segment))
        }
    }

    @Test(arguments: ["/rs:1:1/../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/a/..%2f..%2fetc/passwd",
                      "/a/%2E%2E/b.jpg", "/./a.jpg"])
    func pathTricksAreForbidden(path: String) {
        #expect(throws: SpecError.self) { try parser.parse(path) }
        do { _ = try parser.parse(path) } catch let e {
            if case .forbiddenPath = e { return }
            Issue.record("expected forbiddenPath for \(path), got \(e)")
        }
    }

    @Test func decodedPathsTakePercentLiterally() throws {
        let r = try parser.parse("/rs:10:10/100%25 done.jpg", isDecoded: true)
        #expect(r.sourcePath == "100%25 done.jpg")
        let raw = try parser.parse("/rs:10:10/100%25%20done.jpg")
        #expect(raw.sourcePath == "100% done.jpg")
    }

    @Test func decodedPathsStillRefuseDotSegments() {
        #expect(throws: SpecError.forbiddenPath(reason: "'.' and '..' are not allowed in the source path")) {
            try parser.parse("/rs:1:1/../x.jpg", isDecoded: true)
        }
    }

    @Test func missingSourceIsAnError() {
        #expect(throws: SpecError.missingSourcePath) { try parser.parse("/rs:1:1/") }
        #expect(throws: SpecError.missingSourcePath) { try parser.parse("/rs:1:1/-/") }
    }

    @Test func malformedPercentEncoding() {
        #expect(throws: SpecError.self) { try parser.parse("/a%zz.jpg") }
    }

    /// A NUL would end the path at the first C boundary: refused as a malformed path (400), in
    /// an option segment or the source path, encoded or (already decoded) raw.
    @Test(arguments: [("/a%00b.jpg", false), ("/w:100/photo.jpg%00.png", false), ("/w:1%000/a.jpg", false),
                      ("/w:100/photo.jpg\u{0}.png", true), ("/w:100\u{0}/a.jpg", true)])
    func nulInThePathIsMalformed(path: String, isDecoded: Bool) {
        do {
            _ = try parser.parse(path, isDecoded: isDecoded)
            Issue.record("accepted \(path.debugDescription)")
        } catch {
            guard case .malformedPath(let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(reason.contains("NUL"))
        }
    }

    /// One number grammar for every numeric argument: decimal digits, an optional `-`, a fraction
    /// where fractions are allowed; no hex, exponent, `inf`/`nan` or leading `+`.
    @Test(arguments: ["dpr:0x2", "bl:1e-300", "bl:nan", "dpr:inf", "w:+5", "w:0x10", "dpr:2e0", "q:+80",
                      "dpr:1.", "dpr:.5", "bl: 1", "co:--5", "rot:+90", "dpr:NaN", "bl:0x1p-3"])
    func numbersHaveOneGrammar(option: String) {
        do {
            _ = try parser.parse("/\(option)/a.jpg")
            Issue.record("accepted \(option)")
        } catch {
            guard case .invalidOption(let segment, _) = error else { Issue.record("wrong error \(error)"); return }
            #expect(segment == option)
        }
    }

    @Test func plainNumbersStillParse() throws {
        #expect(try parser.parse("/w:100/dpr:1.5/a.jpg").canonical == parser.parse("/w:150/a.jpg").canonical)
        let blurred = try parser.parse("/bl:0.5/a.jpg")
        #expect(blurred.operations == [.blur(sigma: 0.5)])
        #expect(try parser.parse("/co:-20/a.jpg").operations == [.contrast(-20)])
        #expect(try parser.parse("/dpr:2/w:10/a.jpg").canonical == parser.parse("/w:20/a.jpg").canonical)
    }
}

@Suite struct TrimAndByteBudgetParsingTests {
    let parser = SpecParser()

    @Test func trimIsFirstWhereverItIsWritten() throws {
        let a = try parser.parse("/w:300/t:10/a.jpg")
        let b = try parser.parse("/trim:10/rs:300:0:fit/a.jpg")
        #expect(a.operations.first == .trim(TrimOptions(threshold: 10)))
        #expect(a.canonical == "trim:10/rs:300:0:fit/-/a.jpg")
        #expect(a.canonical == b.canonical)
        #expect(a.leadingResize == nil)   // a full-size decode for the trim
    }

    @Test(arguments: ["trim:0", "trim:255:ffffff", "trim:10::1:0", "trim:10:00ff00:0:1", "trim:3::1:1"])
    func trimCanonicalFormsParseToThemselves(option: String) throws {
        let r = try parser.parse("/\(option)/a.png")
        #expect(r.canonical == "\(option)/-/a.png")
        #expect(try parser.parse("/" + r.canonical) == r)
    }

    @Test func trimSpellingsShareOneForm() throws {
        #expect(try parser.parse("/t:10:/a.png").canonical == "trim:10/-/a.png")
        #expect(try parser.parse("/t:10:FFFFFF:0:0/a.png").canonical == "trim:10:ffffff/-/a.png")
        #expect(try parser.parse("/t:10::1/a.png").canonical == "trim:10::1:0/-/a.png")
    }

    @Test(arguments: ["/t:256/a.png", "/t:-1/a.png", "/t/a.png", "/t:x/a.png", "/t:1:fff/a.png", "/t:1::2/a.png",
                      "/t:1:ffffff:0:0:0/a.png", "/t:1/t:2/a.png"])
    func badTrimIsRefused(path: String) {
        #expect(throws: SpecError.self) { try parser.parse(path) }
    }

    @Test func maxBytesIsPartOfTheIdentity() throws {
        let r = try parser.parse("/mb:20000/w:300/f:webp/a.jpg")
        #expect(r.output.maxBytes == 20000)
        #expect(r.canonical == "rs:300:0:fit/f:webp/max_bytes:20000/-/a.jpg")
        #expect(try parser.parse("/" + r.canonical) == r)
        #expect(r.canonical != (try parser.parse("/w:300/f:webp/a.jpg")).canonical)
        #expect(try parser.parse("/max_bytes:5/a.png").output.maxBytes == 5)   // PNG source: decided at render
    }

    @Test(arguments: ["/mb:0/a.jpg", "/mb:-1/a.jpg", "/mb:100000001/a.jpg", "/mb:1k/a.jpg", "/mb/a.jpg",
                      "/mb:1000/f:png/a.jpg", "/f:webp/ll:1/mb:1000/a.jpg"])
    func badMaxBytesIsRefused(path: String) {
        #expect(throws: SpecError.self) { try parser.parse(path) }
    }

    @Test func policyKnowsTheNewNames() throws {
        #expect(SpecParser.operationName("t") == "trim")
        #expect(SpecParser.operationName("mb") == nil)
        #expect(SpecParser.canonicalOptionName("mb") == "max_bytes")
        let policy = OptionPolicy(allowedOperations: ["resize"])
        #expect(throws: PolicyError.self) { try policy.check(segment: "t:10") }
        try policy.check(segment: "mb:1000")
    }
}
