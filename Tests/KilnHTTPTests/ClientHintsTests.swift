import KilnModel
import Testing
@testable import KilnHTTP

/// Client Hints and Save-Data: header parsing, snapping, the resolved request and `Vary`.
@Suite struct ClientHintsTests {
    let parser = SpecParser()
    let http = HTTPConfiguration()

    func hints(_ headers: [String: String], http: HTTPConfiguration? = nil) -> ClientHints {
        ClientHints(headers: headers, http: http ?? self.http)
    }

    func canonical(_ path: String, _ headers: [String: String], http: HTTPConfiguration? = nil) throws -> String {
        try parser.parse(path, hints: hints(headers, http: http)).canonical
    }

    @Test func widthsSnapUpToTheBuckets() throws {
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "1"]) == "rs:320:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "320"]) == "rs:320:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "321"]) == "rs:640:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "1921"]) == "rs:1920:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "999999999"]) == "rs:1920:0:fit/-/a.jpg")
        // Sec-CH-Width is in device pixels: the DPR does not multiply it again.
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "700", "sec-ch-dpr": "2"]) == "rs:960:0:fit/-/a.jpg")
        // The viewport is in CSS pixels: times the DPR.
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-viewport-width": "375", "sec-ch-dpr": "2"]) == "rs:960:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-viewport-width": "375"]) == "rs:640:0:fit/-/a.jpg")
        // The URL's own dpr: is the viewport's ratio, whatever the hint says.
        #expect(try canonical("/w:auto/dpr:3/a.jpg", ["sec-ch-viewport-width": "375", "sec-ch-dpr": "1"]) == "rs:1280:0:fit/-/a.jpg")
        // The slot's width wins over the viewport's.
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "300", "sec-ch-viewport-width": "1200"]) == "rs:320:0:fit/-/a.jpg")
    }

    @Test func withoutHintsTheDefaultWidth() throws {
        #expect(try canonical("/w:auto/a.jpg", [:]) == "rs:960:0:fit/-/a.jpg")
        var custom = HTTPConfiguration()
        custom.hintDefaultWidth = 500
        custom.hintWidths = [100, 2000]
        #expect(try canonical("/w:auto/a.jpg", [:], http: custom) == "rs:500:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "101"], http: custom) == "rs:2000:0:fit/-/a.jpg")
    }

    @Test func absurdHintsAreIgnoredOrClamped() throws {
        for bad in ["-1", "0", "1e9", "abc", "", "12.5", "+5", "0x10", "1 2", "9999999999"] {
            #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": bad]) == "rs:960:0:fit/-/a.jpg", "width \(bad)")
        }
        for bad in ["1e9", "-2", "0", "NaN", "inf", "abc", "2.", ".5", "1..2"] {
            #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": bad]) == "rs:100:0:fit/-/a.jpg", "dpr \(bad)")
        }
        // Out of range: clamped to Kiln's 1...4; in range: up to a multiple of 0.5.
        #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": "9000000"]) == "rs:400:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": "0.5"]) == "rs:100:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": "2.625"]) == "rs:300:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": "2"]) == "rs:200:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["sec-ch-dpr": "1.25"]) == "rs:150:0:fit/-/a.jpg")
        #expect(ClientHints.ratio("2.0000001") == 2)
    }

    @Test func legacyNamesAndPrecedence() throws {
        #expect(try canonical("/w:auto/a.jpg", ["width": "500"]) == "rs:640:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["viewport-width": "1000"]) == "rs:1280:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["dpr": "3"]) == "rs:300:0:fit/-/a.jpg")
        #expect(try canonical("/w:auto/a.jpg", ["sec-ch-width": "500", "width": "1500"]) == "rs:640:0:fit/-/a.jpg")
    }

    @Test func hintsApplyOnlyToURLsThatOptIn() throws {
        #expect(try canonical("/w:100/a.jpg", ["sec-ch-dpr": "2", "save-data": "on"]) == "rs:100:0:fit/-/a.jpg")
        #expect(try canonical("/ch:0/w:100/a.jpg", ["sec-ch-dpr": "2"]) == "rs:100:0:fit/-/a.jpg")
        // The URL's own dpr: wins over the hint.
        #expect(try canonical("/ch:1/dpr:3/w:100/a.jpg", ["sec-ch-dpr": "2"]) == "rs:300:0:fit/-/a.jpg")
        // The resolved request is the native one: same canonical, same cache key.
        #expect(try canonical("/ch:1/w:auto/f:auto/a.jpg", ["sec-ch-width": "600"]) == (try parser.parse("/w:640/f:auto/a.jpg").canonical))
        // Without an HTTP request (CLI) w:auto has no width.
        #expect(throws: SpecError.self) { try parser.parse("/w:auto/a.jpg") }
        #expect(throws: SpecError.self) { try parser.parse("/ch:2/a.jpg", hints: hints([:])) }
    }

    @Test func saveDataLowersQualityUnlessTheURLHasQ() throws {
        #expect(try canonical("/ch:1/w:100/a.jpg", ["save-data": "on"]) == "rs:100:0:fit/q:50/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["save-data": "ON; foo"]) == "rs:100:0:fit/q:50/-/a.jpg")
        #expect(try canonical("/ch:1/w:100/a.jpg", ["save-data": "off"]) == "rs:100:0:fit/-/a.jpg")
        #expect(try canonical("/ch:1/q:90/w:100/a.jpg", ["save-data": "on"]) == "rs:100:0:fit/q:90/-/a.jpg")
        #expect(try canonical("/ch:1/f:json/a.jpg", ["save-data": "on"]) == "f:json/-/a.jpg")
        // ECT counts only when asked.
        #expect(try canonical("/ch:1/a.jpg", ["ect": "2g"]) == "-/a.jpg")
        var ect = HTTPConfiguration()
        ect.saveDataECT = true
        #expect(try canonical("/ch:1/a.jpg", ["ect": "slow-2g"], http: ect) == "q:50/-/a.jpg")
        #expect(try canonical("/ch:1/a.jpg", ["ect": "4g"], http: ect) == "-/a.jpg")
        var all = HTTPConfiguration()
        all.saveData = .all
        #expect(try canonical("/w:100/a.jpg", ["save-data": "on"], http: all) == "rs:100:0:fit/q:50/-/a.jpg")
        var off = HTTPConfiguration()
        off.saveData = .off
        #expect(try canonical("/ch:1/a.jpg", ["save-data": "on"], http: off) == "-/a.jpg")
    }

    @Test func varyListsTheHintsTheURLConsults() throws {
        func vary(_ path: String, http: HTTPConfiguration? = nil) throws -> [String] {
            let r = try parser.parse(path, hints: hints([:], http: http))
            return ClientHints.varyNames(r.hintUse, http: http ?? self.http)
        }
        #expect(try vary("/w:100/a.jpg") == [])
        #expect(try vary("/w:auto/dpr:2/q:80/a.jpg") == ["Sec-CH-Width", "Sec-CH-Viewport-Width", "Width", "Viewport-Width"])
        #expect(try vary("/ch:1/w:100/q:80/a.jpg") == ["Sec-CH-DPR", "DPR"])
        #expect(try vary("/ch:1/dpr:2/w:100/a.jpg") == ["Save-Data"])
        #expect(try vary("/ch:1/dpr:2/w:100/q:70/a.jpg") == [])
        var ect = HTTPConfiguration()
        ect.saveDataECT = true
        #expect(try vary("/ch:1/dpr:2/a.jpg", http: ect) == ["Save-Data", "ECT"])
    }

    /// Save-Data lowers a quality: an answer without one (PNG, GIF, lossless, a document) does not
    /// vary on it, so the edge keeps one object for it.
    @Test func saveDataVariesOnlyAnswersWithAQuality() throws {
        let r = try parser.parse("/ch:1/dpr:2/w:100/a.png", hints: hints([:], http: http))
        var ect = HTTPConfiguration()
        ect.saveDataECT = true
        for format in [ImageFormat.jpeg, .webp, .avif] {
            #expect(ClientHints.varyNames(r.hintUse, http: ect, answered: format) == ["Save-Data", "ECT"])
            #expect(ClientHints.varyNames(r.hintUse, http: ect, answered: format, lossless: true) == [])
        }
        for format in [ImageFormat.png, .gif, nil] {
            #expect(ClientHints.varyNames(r.hintUse, http: ect, answered: format) == [], "\(String(describing: format))")
        }
        // A URL that fixes a format without quality, or lossless, takes no Save-Data quality at all.
        for path in ["/ch:1/dpr:1/f:png/a.jpg", "/ch:1/dpr:1/f:webp/ll:1/a.jpg"] {
            #expect(try canonical(path, ["save-data": "on"]) == canonical(path, [:]), "\(path)")
        }
        #expect(try canonical("/ch:1/dpr:1/f:webp/a.jpg", ["save-data": "on"]).contains("q:50"))
        // The width hints stay whatever the format: they change the size.
        let auto = try parser.parse("/w:auto/a.png", hints: hints([:], http: http))
        #expect(ClientHints.varyNames(auto.hintUse, http: http, answered: .png).contains("Sec-CH-Width"))
    }

    @Test func signedURLsDeclareTheOptIn() throws {
        let key = SigningKey(key: Array(repeating: 0x42, count: 32), salt: Array(repeating: 0x17, count: 32))
        let gate = RequestGate(signature: URLSignature(keys: [key], allowUnsigned: false), parser: parser)
        let signed = try #require(gate.signature.sign("/w:auto/a.jpg"))
        let request = HTTPRequest(method: "GET", uri: signed, headers: ["sec-ch-width": "900"])
        let r = try gate.admit(request, hints: hints(request.headers)).request
        #expect(r.canonical == "rs:960:0:fit/-/a.jpg")
        #expect(r.hintUse.width)
        // The signature covers the opt-in: the same path without it, signed for w:auto, is refused.
        let tampered = HTTPRequest(method: "GET", uri: String(signed.dropLast("w:auto/a.jpg".count)) + "w:900/a.jpg")
        #expect(throws: (any Error).self) { try gate.admit(tampered, hints: hints([:])) }
    }

    @Test func widthListSetting() {
        #expect(HTTPConfiguration.parseWidths("640, 320,1280") == [320, 640, 1280])
        #expect(HTTPConfiguration.parseWidths("") == nil)
        #expect(HTTPConfiguration.parseWidths("0") == nil)
        #expect(HTTPConfiguration.parseWidths("320,320") == nil)
        #expect(HTTPConfiguration.parseWidths("20000") == nil)
        #expect(HTTPConfiguration.parseWidths("abc") == nil)
    }
}
