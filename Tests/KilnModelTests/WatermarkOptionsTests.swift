import Testing
@testable import KilnModel

/// `watermark:` / `wm:`: grammar, canonical form, its place after the other operations, `dpr`,
/// bad input and the option policy.
@Suite struct WatermarkOptionsTests {
    let parser = SpecParser(presets: ["branded": "rs:200:0/wm:logo:0.5:se:8:8"], watermarks: ["logo", "stamp-2"])

    @Test func defaultsAreSpelledOut() throws {
        let r = try parser.parse("/wm:logo/a.jpg")
        #expect(r.operations == [.watermark(WatermarkOptions(name: "logo"))])
        #expect(r.canonical == "watermark:logo:1:center:0:0:0/-/a.jpg")
        #expect(try parser.parse("/" + r.canonical) == r)
    }

    @Test func everyArgumentRoundTrips() throws {
        let r = try parser.parse("/watermark:stamp-2:0.35:southeast:10:-4:0.25/a.jpg")
        #expect(r.operations == [.watermark(WatermarkOptions(name: "stamp-2", opacity: 0.35, position: .gravity(.southEast),
                                                             x: 10, y: -4, scale: 0.25))])
        #expect(r.canonical == "watermark:stamp-2:0.35:se:10:-4:0.25/-/a.jpg")
        #expect(try parser.parse("/" + r.canonical) == r)
        let tiled = try parser.parse("/wm:logo:0.5:re:4:6/a.jpg")
        #expect(tiled.canonical == "watermark:logo:0.5:tile:4:6:0/-/a.jpg")
        #expect(try parser.parse("/" + tiled.canonical) == tiled)
    }

    @Test(arguments: ["center", "north", "south", "east", "west", "ne", "nw", "se", "sw", "tile"])
    func everyPositionParses(_ position: String) throws {
        let r = try parser.parse("/wm:logo:1:\(position)/a.jpg")
        #expect(r.canonical == "watermark:logo:1:\(position):0:0:0/-/a.jpg")
    }

    @Test func runsAfterEveryOtherOperationWhereverWritten() throws {
        let a = try parser.parse("/wm:logo:0.5/rs:300:200/gs/a.jpg")
        let b = try parser.parse("/rs:300:200/gs/wm:logo:0.5/a.jpg")
        #expect(a == b)
        #expect(a.canonical == "rs:300:200:fit/grayscale/watermark:logo:0.5:center:0:0:0/-/a.jpg")
        // From a preset too.
        let p = try parser.parse("/pr:branded/bl:2/a.jpg")
        #expect(p.canonical == "rs:200:0:fit/blur:2/watermark:logo:0.5:se:8:8:0/-/a.jpg")
    }

    @Test func dprMultipliesTheOffsetsNotTheScale() throws {
        let r = try parser.parse("/dpr:2/wm:logo:1:nw:5:-3:0.2/a.jpg")
        #expect(r.canonical == "watermark:logo:1:nw:10:-6:0.2/-/a.jpg")
    }

    @Test func fractionsAreKeptToTheDecimalsOfTheKey() throws {
        let r = try parser.parse("/wm:logo:0.123456/a.jpg")
        #expect(r.operations == [.watermark(WatermarkOptions(name: "logo", opacity: 0.1235))])
    }

    @Test(arguments: [
        ("/wm:nope/a.jpg", "no watermark named \"nope\""),
        ("/wm:logo:1.5/a.jpg", "opacity must be a number in 0...1"),
        ("/wm:logo:-0.1/a.jpg", "opacity must be a number in 0...1"),
        ("/wm:logo:0.5:smart/a.jpg", "position must be"),
        ("/wm:logo:0.5:fp/a.jpg", "position must be"),
        ("/wm:logo:0.5:se:4/a.jpg", "takes x and y together"),
        ("/wm:logo:0.5:tile:-1:0/a.jpg", "x must be a whole number in 0..."),
        ("/wm:logo:0.5:se:0:0:2/a.jpg", "scale must be a number in 0...1"),
        ("/wm/a.jpg", "takes 1 to 6 argument(s)"),
    ])
    func badInputNamesTheProblem(_ path: String, _ reason: String) {
        do {
            _ = try parser.parse(path)
            Issue.record("\(path) parsed")
        } catch {
            guard case .invalidOption(_, let why) = error else { Issue.record("\(error)"); return }
            #expect(why.contains(reason), "\(path): \(why)")
        }
    }

    @Test func withoutConfiguredWatermarksTheErrorSaysSo() {
        #expect(throws: SpecError.invalidOption(segment: "wm:logo", reason: "no watermarks are configured ([watermarks])")) {
            try SpecParser().parse("/wm:logo/a.jpg")
        }
    }

    @Test func isAnOperationForThePolicy() throws {
        #expect(SpecParser.operationName("wm") == "watermark")
        #expect(SpecParser.canonicalOptionName("wm") == "watermark")
        let only = OptionPolicy(allowedOperations: ["resize"])
        #expect(throws: PolicyError.self) { try parser.check(only, path: "/rs:10:10/wm:logo/a.jpg", isDecoded: false) }
        let with = OptionPolicy(allowedOperations: ["resize", "wm"])
        #expect((try? parser.check(with, path: "/rs:10:10/wm:logo/a.jpg", isDecoded: false)) != nil)
        let presets = OptionPolicy(presetsOnly: true)
        #expect(throws: PolicyError.self) { try parser.check(presets, path: "/wm:logo/a.jpg", isDecoded: false) }
        #expect((try? parser.check(presets, path: "/pr:branded/a.jpg", isDecoded: false)) != nil)
    }

    @Test func namesAreChecked() {
        #expect(WatermarkOptions.isValidName("logo_2-x"))
        #expect(!WatermarkOptions.isValidName("Logo"))
        #expect(!WatermarkOptions.isValidName(""))
        #expect(!WatermarkOptions.isValidName("a/b"))
    }
}
