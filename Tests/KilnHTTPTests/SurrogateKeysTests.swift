import KilnModel
import Testing
@testable import KilnHTTP

/// Issue 28: the surrogate keys of image answers (`SurrogateKeys`), their three spellings and
/// their switches in `[http]`.
@Suite struct SurrogateKeysTests {
    let parser = SpecParser(presets: ["thumb": "rs:20:20:fill", "soft": "bl:2", "odd name,x": "q:70"])

    func value(_ headers: [(String, String)], _ name: String) -> String? {
        headers.first { $0.0 == name }?.1
    }

    @Test func theSourceTagComesFromThePathAlone() throws {
        let tag = SourceTag(sourcePath: "photos/cat.jpg").headerValue
        #expect(tag.hasPrefix("kiln-src-") && tag.count == "kiln-src-".count + 32)
        // Every variant of one source carries the same tag; another source another.
        for uri in ["/photos/cat.jpg", "/w:10/f:webp/photos/cat.jpg", "/rs:30:30:fill/-/photos/cat.jpg", "/cb:v2/q:40/photos/cat.jpg"] {
            #expect(SurrogateKeys.tags(for: try parser.parse(uri)) == [tag], "\(uri)")
        }
        #expect(SurrogateKeys.tags(for: try parser.parse("/photos/dog.jpg")) != [tag])
    }

    @Test func presetsAddTheirTagsInURLOrderOnce() throws {
        let r = try parser.parse("/pr:soft:thumb/pr:soft/a.jpg")
        #expect(r.presets == ["soft", "thumb"])
        #expect(r.canonical == (try parser.parse("/bl:2/rs:20:20:fill/bl:2/a.jpg")).canonical)
        let src = SourceTag(sourcePath: "a.jpg").headerValue
        #expect(SurrogateKeys.tags(for: r) == [src, "kiln-preset-soft", "kiln-preset-thumb"])
        #expect(try parser.parse("/rs:20:20:fill/a.jpg").presets.isEmpty)
        #expect(try parser.parse("/preset:thumb/a.jpg").presets == ["thumb"])
    }

    @Test func aPresetNameNeverBreaksTheTagList() throws {
        #expect(SurrogateKeys.presetTag("odd name,x") == "kiln-preset-odd%20name%2Cx")
        #expect(SurrogateKeys.presetTag("a.b_c~d-9") == "kiln-preset-a.b_c~d-9")
        #expect(SurrogateKeys.presetTag("é\r\n") == "kiln-preset-%C3%A9%0D%0A")
        let r = try parser.parse("/pr:odd%20name%2Cx/a.jpg")
        let h = SurrogateKeys().headers(for: r)
        #expect(value(h, "Surrogate-Key")?.split(separator: " ").count == 2)
        #expect(value(h, "Cache-Tag")?.split(separator: ",").count == 2)
    }

    @Test func threeSpellingsEachSwitchable() throws {
        let r = try parser.parse("/pr:thumb/a.jpg")
        let src = SourceTag(sourcePath: "a.jpg").headerValue
        let all = SurrogateKeys().headers(for: r)
        #expect(all.map(\.0) == ["Surrogate-Key", "xkey", "Cache-Tag"])
        #expect(value(all, "Surrogate-Key") == "\(src) kiln-preset-thumb")
        #expect(value(all, "xkey") == "\(src) kiln-preset-thumb")
        #expect(value(all, "Cache-Tag") == "\(src),kiln-preset-thumb")
        #expect(SurrogateKeys(surrogateKey: false, xkey: true, cacheTag: false).headers(for: r).map(\.0) == ["xkey"])
        #expect(SurrogateKeys(surrogateKey: false, xkey: false, cacheTag: false).headers(for: r).isEmpty)
    }

    @Test func settingsDefaultOnAndTurnEachOff() throws {
        let defaults = try HTTPConfiguration(ConfigValues([:]))
        #expect(SurrogateKeys(defaults) == SurrogateKeys(surrogateKey: true, xkey: true, cacheTag: true))
        let off = try HTTPConfiguration(ConfigValues(["http.xkey": "false", "http.cache_tag": "false"]))
        #expect(SurrogateKeys(off) == SurrogateKeys(surrogateKey: true, xkey: false, cacheTag: false))
        #expect(throws: ConfigError.self) { try HTTPConfiguration(ConfigValues(["http.surrogate_key": "maybe"])) }
    }
}
