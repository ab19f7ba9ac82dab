import Testing
@testable import KilnModel

@Suite struct OptionPolicyTests {
    let parser = SpecParser(presets: ["thumb": "rs:50:50:fill/bl:2", "avatar": "rs:96:96:fill/circle"])

    func allowed(_ policy: OptionPolicy, _ path: String, decoded: Bool = false) -> Bool {
        (try? parser.check(policy, path: path, isDecoded: decoded)) != nil
    }

    @Test func presetsOnlyAcceptsPresetsAndTheAllowList() {
        let p = OptionPolicy(presetsOnly: true, presetsOnlyAllow: ["f:auto", "dpr"])
        #expect(allowed(p, "/pr:thumb/a.jpg"))
        #expect(allowed(p, "/preset:thumb:avatar/a.jpg"))
        #expect(allowed(p, "/pr:thumb/format:auto/dpr:2/a.jpg"))
        #expect(allowed(p, "/exp:1700000000/pr:thumb/a.jpg"))
        #expect(allowed(p, "/a.jpg"))
        #expect(allowed(p, "/pr:thumb/-/rs:9:9/a.jpg"), "after - it is the source path")
        #expect(!allowed(p, "/pr:thumb/f:webp/a.jpg"), "only f:auto is allowed")
        #expect(!allowed(p, "/rs:300:200/a.jpg"))
        #expect(!allowed(p, "/pr:thumb/bl:5/a.jpg"))
        #expect(!allowed(p, "/pr:thumb/rs%3A300%3A200/a.jpg"), "percent-encoded options are options")
        #expect(!allowed(p, "/pr:thumb/rs:300:200/a.jpg", decoded: true))
        #expect(!allowed(p, "/circle/a.jpg"))
        #expect(throws: PolicyError.self) { try parser.check(p, path: "/w:5/a.jpg", isDecoded: false) }
    }

    @Test func allowedOperationsCountsAliasesAsTheirOperation() {
        let p = OptionPolicy(allowedOperations: ["resize", "crop"])
        #expect(allowed(p, "/rs:300:200/q:80/f:webp/g:north/a.jpg"))
        #expect(allowed(p, "/w:300/h:200/crop:10:10/a.jpg"))
        #expect(allowed(p, "/pr:thumb/a.jpg"), "presets are the operator's")
        #expect(!allowed(p, "/w:300/bl:3/a.jpg"))
        #expect(!allowed(p, "/w:300/blur:3/a.jpg"))
        #expect(!allowed(p, "/circle/a.jpg"))
        #expect(OptionPolicy(allowedOperations: ["rs", "bl"]).allowedOperations == ["resize", "blur"])
    }

    @Test func openPolicyChecksNothing() {
        #expect(OptionPolicy().isOpen)
        #expect(allowed(OptionPolicy(), "/bl:3/rs:1:1/a.jpg"))
    }

    @Test func everyOptionNameOfTheTableParses() throws {
        // The table must follow the parser: every name in it is an option.
        for name in OptionCatalog.all.flatMap(\.names) {
            var b = RequestBuilder()
            let isOption = (try? parser.parseOption(name + ":1", into: &b, presetDepth: 0))
                ?? (try? parser.parseOption(name, into: &b, presetDepth: 0))
            let threw = isOption == nil
            #expect(threw || isOption == true, "\(name)")
        }
    }
}
