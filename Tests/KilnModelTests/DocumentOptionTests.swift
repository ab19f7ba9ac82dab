import Testing
@testable import KilnModel

/// `f:json`, `f:blurhash`, `f:thumbhash`, `placeholders:`, `blurhash:` in the URL grammar.
@Suite struct DocumentOptionTests {
    let parser = SpecParser()

    @Test func documentsParseToCanonicalSpellings() throws {
        let json = try parser.parse("/rs:300:200:fill/f:json/ph:1/bh:5:4/a.jpg")
        #expect(json.output.document == .json && json.output.placeholders && json.output.blurhash == BlurHashComponents(x: 5, y: 4))
        #expect(json.output.format == .source)
        #expect(json.canonical == "rs:300:200:fill/f:json/placeholders:1/blurhash:5:4/-/a.jpg")
        #expect(try parser.parse("/" + json.canonical).canonical == json.canonical)
        #expect(try parser.parse("/f:blurhash/bh:4:3/a.jpg").canonical == "f:blurhash/-/a.jpg", "the default components are implied")
        #expect(try parser.parse("/format:thumbhash/a.jpg").output.document == .thumbhash)
    }

    @Test func aLaterFormatReplacesTheDocument() throws {
        let r = try parser.parse("/f:json/f:webp/a.jpg")
        #expect(r.output.document == nil && r.output.format == .format(.webp))
        let back = try parser.parse("/f:webp/f:json/a.jpg")
        #expect(back.output.document == .json && back.output.format == .source)
    }

    @Test func encoderOptionsAreDroppedFromDocuments() throws {
        #expect(try parser.parse("/q:50/pg:1/strip:0/f:json/a.jpg").canonical == "f:json/-/a.jpg")
    }

    @Test func misplacedOptionsAreRefused() {
        for path in ["/ph:1/a.jpg", "/f:webp/ph:1/a.jpg", "/bh:3:3/a.jpg", "/f:json/bh:3:3/a.jpg", "/f:thumbhash/bh:3:3/a.jpg",
                     "/f:blurhash/ph:1/a.jpg", "/f:blurhash/w:100/a.jpg", "/f:thumbhash/gs/a.jpg",
                     "/f:blurhash/bh:0:3/a.jpg", "/f:blurhash/bh:10:3/a.jpg", "/f:blurhash/bh:4/a.jpg", "/f:xml/a.jpg"] {
            #expect(throws: SpecError.self, "\(path)") { try parser.parse(path) }
        }
    }

    /// The refusal quotes the option as the URL wrote it (`w:300`), not its canonical step
    /// (`rs:300:0:fit`); a preset is quoted by its name.
    @Test func refusedStepsAreQuotedAsWritten() {
        let presets = SpecParser(presets: ["card": "rs:600:400:fill"])
        for (parser, path, quoted) in [(parser, "/f:blurhash/w:300/a.jpg", "w:300"), (parser, "/w:300/h:200/f:thumbhash/a.jpg", "w:300"),
                                       (parser, "/f:blurhash/gs/a.jpg", "gs"), (presets, "/f:blurhash/pr:card/a.jpg", "pr:card")] {
            do {
                _ = try parser.parse(path)
                Issue.record("\(path) parsed")
            } catch {
                guard case let .invalidOption(segment, reason) = error else { Issue.record("\(path): \(error)"); continue }
                #expect(segment == quoted && reason.contains("takes no processing step"), "\(path): \(segment): \(reason)")
            }
        }
    }

    @Test func optionNamesAreKnownToThePolicy() {
        #expect(SpecParser.canonicalOptionName("ph") == "placeholders")
        #expect(SpecParser.canonicalOptionName("bh") == "blurhash")
        #expect(SpecParser.operationName("bh") == nil)
    }

    @Test func jsonWriterIsStable() {
        let v = JSONValue.object(["b": .number(0.004), "a": .array([.int(1), .bool(true), .null]), "c": .string("x\"\n\u{1}"),
                                  "d": .number(-33.85681), "e": .number(2)])
        #expect(v.text == #"{"a":[1,true,null],"b":0.004,"c":"x\"\n\u0001","d":-33.85681,"e":2}"#)
    }

    @Test func base64() {
        #expect(Base64.encode([]) == "")
        #expect(Base64.encode(Array("f".utf8)) == "Zg==")
        #expect(Base64.encode(Array("fo".utf8)) == "Zm8=")
        #expect(Base64.encode(Array("foobar".utf8)) == "Zm9vYmFy")
        #expect(Base64.encode([0xFB, 0xFF]) == "+/8=")
    }
}
