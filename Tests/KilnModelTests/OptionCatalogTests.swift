import Foundation
import Testing
@testable import KilnModel
import KilnTestBytes

/// The option declarations (`OptionCatalog`) against everything derived from them: the parser,
/// the policy's names, the docs' tables and the fuzz dictionary. `KILN_DOCS_UPDATE=1` rewrites
/// the generated parts of the files instead of comparing them.
@Suite struct OptionCatalogTests {
    let parser = SpecParser(maxOperations: 32, watermarks: ["logo"])

    @Test func everyNameIsDeclaredOnce() {
        let names = OptionCatalog.all.flatMap(\.names)
        #expect(Set(names).count == names.count)
        for option in OptionCatalog.all {
            #expect(!option.usages.isEmpty, "\(option.name) has no documented usage")
            #expect(option.usages.allSatisfy { !$0.examples.isEmpty }, "\(option.name) has no example")
        }
    }

    /// Every documented example parses, and a declared option reaches its own declaration.
    @Test func everyExampleParses() throws {
        let presets = SpecParser(presets: ["avatar": "rs:96:96:fill/circle/f:webp"], watermarks: ["logo"])
        for option in OptionCatalog.all {
            for usage in option.usages {
                for example in usage.examples {
                    var request: ImageRequest?
                    #expect(throws: Never.self, "\(example)") {
                        request = try presets.parse(example, hints: AnyWidth())
                    }
                    let ext = request?.sourcePath.split(separator: ".").last.map(String.init) ?? ""
                    #expect(ImageFormat(fileExtension: ext) != nil, "\(example) parsed to \(String(describing: request?.sourcePath))")
                }
            }
        }
    }

    /// Steps name their declaration and back: `Operation.optionName` is a declared step option.
    @Test func operationsAndDeclarationsAgree() throws {
        let request = try parser.parse("/t:5/rs:10:10/crop:5:5/pad:1/circle/rc:2/bl:1/sh:1/gs/sepia/tint:ff0000/br:1/co:1/sa:1/rot:90/flip:h/wm:logo/a.jpg")
        #expect(request.operations.count == 17)
        for operation in request.operations {
            let declaration = OptionCatalog.declaration(of: operation)
            #expect(declaration?.operation == operation.optionName, "\(operation)")
            #expect(declaration?.perFrame == true)
        }
        for option in OptionCatalog.all where option.operation == nil {
            #expect(option.table == .options, "\(option.name) adds no step but is listed as a processor")
        }
    }

    @Test func policyNamesComeFromTheDeclarations() {
        for option in OptionCatalog.all {
            for name in option.names {
                #expect(SpecParser.canonicalOptionName(name) == option.name)
                #expect(SpecParser.operationName(name) == option.operation)
            }
        }
        let always = OptionCatalog.all.filter { $0.access == .always }.map(\.name)
        #expect(always == ["expires"], "only restricting options skip the policy")
        let policy = OptionPolicy(presetsOnly: true)
        #expect((try? parser.check(policy, path: "/exp:1/a.jpg", isDecoded: false)) != nil)
    }

    @Test func privacyRelevantOptionsAreMarked() {
        let revealing = OptionCatalog.all.filter { $0.privacy != .none }.map(\.name)
        #expect(revealing == ["strip"])
    }

    @Test func docsTablesAreGenerated() throws {
        try Self.checkGenerated(file: "docs/url-api.md", marker: "options table", text: OptionCatalog.markdownTable(.options))
        try Self.checkGenerated(file: "docs/url-api.md", marker: "options processors", text: OptionCatalog.markdownTable(.processors))
    }

    @Test func fuzzDictionaryHasEveryToken() throws {
        let tokens = OptionCatalog.fuzzTokens.map { "\"\($0)\"" }.joined(separator: "\n")
        try Self.checkGenerated(file: "Fuzz/Dictionaries/FuzzSpecParser.dict", marker: "OptionCatalog.fuzzTokens", text: tokens,
                                begin: "# generated: ", end: "# end generated")
    }

    /// Compares (or rewrites) the lines between `<begin><marker>…` and `<end>…` in `file`.
    static func checkGenerated(file: String, marker: String, text: String,
                               begin: String = "<!-- generated: ", end: String? = nil) throws {
        guard let current = try GeneratedBlock.sync(file: file, marker: marker, text: text, begin: begin, end: end) else {
            Issue.record("\(file): no generated block \(marker)")
            return
        }
        #expect(current == text, "\(file) (\(marker)) differs from OptionCatalog: run KILN_DOCS_UPDATE=1 swift test --filter OptionCatalog")
    }
}

/// Any device: 640 px.
private struct AnyWidth: DeviceHintResolving {
    func resolve(_ use: DeviceHintUse) -> DeviceAnswer { DeviceAnswer(width: 640) }
}

/// `format_quality` (`fq`), the option docs/development.md adds as its walkthrough.
@Suite struct FormatQualityTests {
    let parser = SpecParser()

    @Test func parsesIntoOneCanonicalSpelling() throws {
        let a = try parser.parse("/fq:webp:70:avif:50/f:auto/a.jpg")
        let b = try parser.parse("/format_quality:avif:50:webp:70/f:auto/a.jpg")
        #expect(a.canonical == b.canonical)
        #expect(a.canonical == "fq:avif:50:webp:70/f:auto/-/a.jpg")
        #expect(try parser.parse("/" + a.canonical).canonical == a.canonical)
        #expect(a.output.formatQualities == [.avif: 50, .webp: 70])
        #expect(try parser.parse("/fq:jpg:80/a.jpg").output.formatQualities == [.jpeg: 80])
    }

    @Test(arguments: ["fq:webp", "fq:png:50", "fq:webp:0", "fq:webp:50:webp:60", "fq:gif:50"])
    func badArgumentsNameTheOption(_ segment: String) {
        #expect(throws: SpecError.self) { try parser.parse("/\(segment)/a.jpg") }
    }

    @Test func theAllowListChecksEveryQuality() throws {
        let list = VariantAllowList(qualities: [50, 80], policy: .snap)
        let snapped = try list.apply(to: try parser.parse("/fq:webp:60:avif:90/f:auto/a.jpg"))
        #expect(snapped.output.formatQualities == [.webp: 80, .avif: 80])
        let refusing = VariantAllowList(qualities: [50, 80], policy: .refuse)
        #expect(throws: SpecError.self) { try refusing.apply(to: try parser.parse("/fq:webp:60/a.jpg")) }
    }

    @Test func documentsDropIt() throws {
        #expect(try parser.parse("/fq:webp:60/f:json/a.jpg").canonical == "f:json/-/a.jpg")
    }
}
