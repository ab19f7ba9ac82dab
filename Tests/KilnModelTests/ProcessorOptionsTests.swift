import Testing
@testable import KilnModel

/// The processor options of the URL grammar: parsing, canonical forms, request-wide options.
@Suite struct ProcessorOptionsTests {
    let parser = SpecParser(presets: ["avatar": "rs:96:96:fill/circle/f:webp", "soft": "bl:2/q:70",
                                      "loop": "pr:avatar"])

    @Test func everyOperationRoundTripsThroughItsCanonicalForm() throws {
        let path = "/crop:100:80:ne/crop:10:20:3:4/pad:5/pad:1:2/pad:1:2:3:4/bg:FF8800/circle/circle:00ff00/rc:12"
            + "/bl:2.5/sh:1/gs/sepia/tint:336699/br:10/co:-20/sa:-100/rot:90/flip:hv/ar:0/pg:1/ll:1/strip:0/f:webp/a.jpg"
        let r = try SpecParser(maxOperations: 20).parse(path)
        #expect(r.operations.count == 18)
        #expect(r.autorotate == false)
        #expect(r.output.background == RGBColor(red: 255, green: 136, blue: 0))
        #expect(r.output.progressive == true && r.output.lossless && r.output.strip == MetadataPolicy.none)
        #expect(r.canonical == "crop:100:80:ne/crop:10:20:3:4/pad:5:5:5:5/pad:1:2:1:2/pad:1:2:3:4/circle/circle:00ff00"
                + "/rounded:12/blur:2.5/sharpen:1/grayscale/sepia/tint:336699/brightness:10/contrast:-20/saturation:-100"
                + "/rotate:90/flip:hv/autorotate:0/background:ff8800/f:webp/progressive:1/lossless:1/strip:0/-/a.jpg")
        #expect(try SpecParser(maxOperations: 20).parse("/" + r.canonical) == r)
        if case .pad(let p) = r.operations[2] { #expect(p.background == RGBColor(hex: "ff8800")) } else { Issue.record("pad") }
    }

    @Test func subsamplingTakesThreeSpellingsAndRefusesOthers() throws {
        for (path, want) in [("/ss:444/a.jpg", ChromaSubsampling.s444), ("/subsampling:4:2:2/a.jpg", .s422), ("/ss:420/f:jpeg/a.jpg", .s420)] {
            let r = try parser.parse(path)
            #expect(r.output.subsampling == want, "\(path)")
            #expect(r.canonical.contains("subsampling:\(want.rawValue)"))
            #expect(try parser.parse("/" + r.canonical) == r)
        }
        for bad in ["/ss:411/a.jpg", "/ss:4:4/a.jpg", "/ss/a.jpg", "/ss:444:1/a.jpg"] {
            #expect(throws: SpecError.self, "\(bad)") { _ = try parser.parse(bad) }
        }
    }

    @Test func gravityAppliesToFillAndToCropsWithoutTheirOwn() throws {
        let r = try parser.parse("/rs:300:200:fill/crop:50:50/crop:10:10:sw/g:fp:0.25:0.7/a.jpg")
        #expect(r.operations == [
            .resize(ResizeOptions(width: 300, height: 200, mode: .fill, gravity: .focalPoint(x: 0.25, y: 0.7))),
            .crop(CropOptions(width: 50, height: 50, gravity: .focalPoint(x: 0.25, y: 0.7))),
            .crop(CropOptions(width: 10, height: 10, gravity: .southWest)),
        ])
        #expect(r.canonical.hasPrefix("rs:300:200:fill/g:fp:0.25:0.7/crop:50:50:fp:0.25:0.7/crop:10:10:sw/"))
        #expect(try parser.parse("/" + r.canonical) == r)
        // A fit resize ignores gravity, so `g:` does not change its identity.
        #expect(try parser.parse("/rs:300:200/g:north/a.jpg").canonical == "rs:300:200:fit/-/a.jpg")
        #expect(try parser.parse("/rs:3:2:fill/g:smart/a.jpg").canonical == "rs:3:2:fill/g:smart/-/a.jpg")
    }

    @Test func dprMultipliesSizesAndIsNotInTheKey() throws {
        let r = try parser.parse("/rs:100:50:fill/pad:2/rc:4/dpr:2/a.jpg")
        #expect(r.canonical == "rs:200:100:fill/pad:4:4:4:4/rounded:8/-/a.jpg")
        #expect(throws: SpecError.self) { try parser.parse("/rs:10000:0/dpr:2/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/dpr:5/a.jpg") }
    }

    @Test func presetsExpandInPlace() throws {
        let r = try parser.parse("/pr:avatar/bl:1/a.jpg")
        #expect(r.canonical == "rs:96:96:fill/circle/blur:1/f:webp/-/a.jpg")
        #expect(try parser.parse("/preset:avatar:soft/a.jpg").canonical == "rs:96:96:fill/circle/blur:2/q:70/f:webp/-/a.jpg")
        #expect(throws: SpecError.invalidOption(segment: "pr:nope", reason: "no preset named \"nope\"")) {
            try parser.parse("/pr:nope/a.jpg")
        }
        #expect(throws: SpecError.self) { try parser.parse("/pr:loop/a.jpg") }
        #expect(throws: SpecError.self) { try parser.validatePresets() }
        #expect(throws: Never.self) { try SpecParser(presets: ["a": "rs:1:1/gs"]).validatePresets() }
        #expect(throws: SpecError.self) { try SpecParser(presets: ["a": "rs:1:1/photos"]).validatePresets() }
    }

    @Test func operationCountIsLimited() throws {
        let small = SpecParser(maxOperations: 3)
        #expect(throws: Never.self) { try small.parse("/gs/sepia/gs/a.jpg") }
        #expect(throws: SpecError.self) { try small.parse("/gs/sepia/gs/sepia/a.jpg") }
    }

    @Test(arguments: ["/rc:-1/a.jpg", "/rc:0/a.jpg", "/bl:1000/a.jpg", "/bl:0/a.jpg", "/bl:nan/a.jpg", "/sh:-2/a.jpg",
                      "/g:up/a.jpg", "/g:fp:2:0/a.jpg", "/crop:0:10/a.jpg", "/crop:10:10:up/a.jpg", "/pad:1:2:3/a.jpg",
                      "/bg:fff/a.jpg", "/tint:zzzzzz/a.jpg", "/br:101/a.jpg", "/co:-101/a.jpg", "/rot:45/a.jpg",
                      "/flip:x/a.jpg", "/ar:2/a.jpg", "/circle:1:2/a.jpg", "/gs:1/a.jpg", "/ll:yes/a.jpg"])
    func badArgumentsNameTheOption(path: String) {
        do {
            _ = try parser.parse(path)
            Issue.record("accepted \(path)")
        } catch {
            guard case .invalidOption(let segment, let reason) = error else { Issue.record("wrong error \(error)"); return }
            #expect(path.contains(segment))
            #expect(!reason.isEmpty)
        }
    }

    @Test func customOperationsResolveThroughTheResolver() throws {
        let p = SpecParser(customResolver: { name, args throws(SpecError) in
            guard name == "posterize" else { return nil }
            guard args.count == 1, let n = Int(args[0]) else { throw .invalidOption(segment: "posterize", reason: "levels") }
            return CustomOperation(name: name, arguments: args, identifier: "posterize:\(n)")
        })
        let r = try p.parse("/posterize:04/a.jpg")
        #expect(r.canonical == "posterize:4/-/a.jpg")
        #expect(throws: SpecError.self) { try p.parse("/posterize:x/a.jpg") }
        #expect(throws: SpecError.unknownOption(segment: "other:1")) { try p.parse("/other:1/a.jpg") }
    }

    @Test func gravityGeometry() {
        #expect(Gravity.north.origin(extent: 100, window: 40, anchor: Gravity.north.anchor!.x) == 30)
        #expect(Gravity.southEast.origin(extent: 100, window: 40, anchor: 1) == 60)
        let fp = Gravity.focalPoint(x: 0.9, y: 0.1)
        #expect(fp.origin(extent: 100, window: 40, anchor: 0.9) == 60)  // clamped at the right edge
        #expect(fp.origin(extent: 100, window: 40, anchor: 0.5) == 30)
        #expect(Gravity.format(0.33333) == "0.3333" && Gravity.format(2) == "2" && Gravity.format(0.5) == "0.5")
    }

    @Test func fillPlanFollowsGravity() {
        let north = ResizePlan(options: ResizeOptions(width: 100, height: 100, mode: .fill, gravity: .north),
                               source: PixelSize(width: 200, height: 400))
        #expect(north.sourceY == 0 && north.sourceX == 0 && north.sourceHeight == 200)
        let south = ResizePlan(options: ResizeOptions(width: 100, height: 100, mode: .fill, gravity: .south),
                               source: PixelSize(width: 200, height: 400))
        #expect(south.sourceY == 200)
        let centre = ResizePlan(options: ResizeOptions(width: 100, height: 100, mode: .fill), source: PixelSize(width: 200, height: 400))
        #expect(centre.sourceY == 100)
    }
}
