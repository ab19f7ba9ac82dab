import KilnModel
@testable import KilnCodecs
import Testing

/// The SVG sanitiser against the hostile documents of issue 38: each is refused with the right
/// kind of error, or comes out without what made it hostile.
@Suite struct SVGSanitizerTests {
    static func sanitize(_ text: String) throws(DecodeError) -> SVGSanitizer.Result {
        try SVGSanitizer.sanitize(Array(text.utf8))
    }

    static func output(_ text: String) throws -> String {
        String(decoding: try sanitize(text).document, as: UTF8.self)
    }

    static func error(_ text: String) -> DecodeError? {
        do { _ = try sanitize(text); return nil } catch { return error }
    }

    @Test func keepsDrawingAndWritesTheSizeInPixels() throws {
        let out = try Self.output("""
            <?xml version="1.0"?><!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">
            <svg xmlns="http://www.w3.org/2000/svg" width="2in" height="1in" viewBox="0 0 20 10"><!-- c -->
            <defs><linearGradient id="g"><stop offset="0" stop-color="red"/></linearGradient></defs>
            <rect width="10" height="10" fill="url(#g)"/><text x="1" y="2">a &lt; b</text></svg>
            """)
        #expect(out.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"192\" height=\"96\" viewBox=\"0 0 20 10\">"))
        #expect(out.contains("<rect width=\"10\" height=\"10\" fill=\"url(#g)\"/>"))
        #expect(out.contains("<text x=\"1\" y=\"2\">a &lt; b</text>"))
        #expect(!out.contains("DOCTYPE") && !out.contains("<!--") && !out.contains("<?xml"))
    }

    @Test func intrinsicSizes() throws {
        func size(_ attributes: String) throws -> (Double, Double) {
            let f = try Self.sanitize("<svg \(attributes)/>").facts
            return (f.intrinsicWidth, f.intrinsicHeight)
        }
        #expect(try size("width=\"100\" height=\"50\"") == (100, 50))
        #expect(try size("width=\"30pt\" height=\"3em\"") == (40, 48))
        #expect(try size("width=\"200\" viewBox=\"0 0 40 10\"") == (200, 50))
        #expect(try size("width=\"100%\" height=\"100%\" viewBox=\"0 0 64 32\"") == (64, 32))
        #expect(try size("") == (300, 150))
    }

    @Test func scriptsHandlersAndForeignContentAreDropped() throws {
        let result = try Self.sanitize("""
            <svg xmlns="http://www.w3.org/2000/svg" xmlns:x="http://example.com/x"><script>alert(1)</script>
            <circle r="4" onclick="alert(2)" onload="alert(3)" x:evil="1"/><foreignObject><iframe src="http://a/"/></foreignObject>
            <a href="javascript:alert(4)"><rect width="1" height="1"/></a><x:thing/><animate attributeName="href" to="http://a/"/></svg>
            """)
        let out = String(decoding: result.document, as: UTF8.self)
        for banned in ["script", "alert", "onclick", "foreignObject", "iframe", "javascript", "x:", "animate"] {
            #expect(!out.contains(banned), "\(banned) left in \(out)")
        }
        #expect(out.contains("<circle r=\"4\"/>") && out.contains("<a><rect"))
        #expect(result.removed >= 8)
    }

    @Test func referencesLeavingTheDocumentAreRemoved() throws {
        let out = try Self.output("""
            <svg xmlns:xlink="http://www.w3.org/1999/xlink"><image href="http://127.0.0.1:9/x.png" width="9" height="9"/>
            <image xlink:href="file:///etc/passwd"/><use xlink:href="other.svg#a"/><use href=" #a "/>
            <rect id="a" style="fill:url(http://127.0.0.1:9/p);stroke:url(#g)" filter="url(https://x/f#f)"/>
            <style>@import url(http://127.0.0.1:9/s.css); rect { fill: url('http://x/y') } circle { fill: url(#g) }</style>
            <filter id="f"><feImage href="http://127.0.0.1:9/i.png"/></filter></svg>
            """)
        for banned in ["127.0.0.1", "file:", "other.svg", "https:", "@import", "http://x"] {
            #expect(!out.contains(banned), "\(banned) left in \(out)")
        }
        #expect(out.contains("<use xlink:href=\"#a\"/>"))
        #expect(out.contains("style=\"fill:none;stroke:url(#g)\""))
        #expect(out.contains("circle { fill: url(#g) }"))
    }

    @Test func cssSplitOverCDATAIsCleanedWhole() throws {
        let out = try Self.output("<svg><style>rect { fill: ur<![CDATA[l(http://127.0.0.1:9/p) }]]></style><text><![CDATA[]]></text></svg>")
        #expect(!out.contains("127.0.0.1") && out.contains("fill: none }") && out.contains("<text/>"))
    }

    @Test func entitiesAreNeverExpanded() {
        let xxe = "<!DOCTYPE svg [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><svg>&x;</svg>"
        #expect(Self.error(xxe) == .unsupported("SVG declares XML entities (<!ENTITY>), which Kiln never expands"))
        let laughs = "<!DOCTYPE svg [<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">]><svg><text>&b;</text></svg>"
        #expect(Self.error(laughs) == .unsupported("SVG declares XML entities (<!ENTITY>), which Kiln never expands"))
        #expect(Self.error("<svg><text>&nbsp;</text></svg>") == .corrupt("SVG uses the undeclared entity &nbsp;"))
        #expect(Self.error("<svg><text>&#0;</text></svg>") == .corrupt("SVG has an invalid character reference &#0;"))
    }

    @Test func useExpansionIsCountedAndLoopsRefused() {
        // Ten <use> of the previous level, nine levels deep: 10⁹ elements drawn.
        var levels = "<g id=\"l0\"><rect width=\"1\" height=\"1\"/></g>"
        for level in 1...9 {
            let uses = String(repeating: "<use href=\"#l\(level - 1)\"/>", count: 10)
            levels += "<g id=\"l\(level)\">\(uses)</g>"
        }
        guard case .overLimit(let m)? = Self.error("<svg><defs>\(levels)</defs><use href=\"#l9\"/></svg>") else {
            Issue.record("the use bomb was not refused")
            return
        }
        #expect(m.hasPrefix("SVG draws ") && m.hasSuffix("elements once <use> and markers are expanded (at most 250000)"))
        #expect(Self.error("<svg><g id=\"a\"><use href=\"#a\"/></g></svg>") == .corrupt("SVG references form a loop (<use> reaches itself)"))
        #expect(Self.error("<svg><use id=\"a\" href=\"#b\"/><use id=\"b\" href=\"#a\"/></svg>") != nil)
        // A shallow expansion is allowed and counted.
        let ok = try? Self.sanitize("<svg><g id=\"a\"><rect/><rect/></g><use href=\"#a\"/><use href=\"#a\"/></svg>")
        #expect(ok?.facts.instances == 1 + 3 + 2 * (1 + 3))
    }

    @Test func structuralLimits() {
        let deep = String(repeating: "<g>", count: 300) + String(repeating: "</g>", count: 300)
        #expect(Self.error("<svg>\(deep)</svg>") == .overLimit("SVG nests deeper than 256 elements"))
        let many = String(repeating: "<rect/>", count: 50_001)
        #expect(Self.error("<svg>\(many)</svg>") == .overLimit("SVG has more than 50000 elements"))
        let filters = String(repeating: "<feFlood/>", count: 101)
        #expect(Self.error("<svg><filter>\(filters)</filter></svg>") == .overLimit("SVG has more than 100 filter primitives"))
        #expect(Self.error("<svg><filter><feMorphology radius=\"1000\"/></filter></svg>") == .overLimit("SVG feMorphology of radius 1000 (at most 32)"))
        #expect(Self.error("<svg><filter><feConvolveMatrix order=\"99\"/></filter></svg>") == .overLimit("SVG feConvolveMatrix of order 99 (at most 9)"))
        #expect(Self.error("<svg><filter><feTurbulence numOctaves=\"1000000\"/></filter></svg>") == .overLimit("SVG feTurbulence of 1000000 octaves (at most 10)"))
    }

    @Test func filtersArePriced() throws {
        let plain = try Self.sanitize("<svg><rect/></svg>").facts
        let blurred = try Self.sanitize("<svg><filter id=\"f\"><feGaussianBlur stdDeviation=\"5\"/><feOffset/></filter><rect filter=\"url(#f)\"/></svg>").facts
        #expect(plain.rasterPasses == 1)
        #expect(blurred.filterPrimitives == 2 && blurred.rasterPasses == 1 + 4 + 2)
    }

    @Test func notSVGOrNotWellFormed() {
        #expect(Self.error("<html><body/></html>") == .unsupported("not an SVG document: the root element is <html>"))
        #expect(Self.error("<svg><g></svg>") == .corrupt("SVG is not well-formed: unexpected </svg>"))
        #expect(Self.error("<svg><g>") == .corrupt("SVG is truncated: <g> is not closed"))
        #expect(Self.error("<svg><rect width=10/></svg>") == .corrupt("SVG attribute width is not quoted"))
        #expect(Self.error("<svg/><svg/>") == .corrupt("SVG has more than one root element"))
    }

    @Test func embeddedImagesAreCheckedByTheirHeader() throws {
        // A 1x1 PNG, and one whose IHDR claims 100000x100000.
        let tiny = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
        let ok = try Self.sanitize("<svg><image href=\"data:image/png;base64,\(tiny)\"/></svg>")
        #expect(ok.facts.embeddedPixels == 1)
        #expect(String(decoding: ok.document, as: UTF8.self).contains("data:image/png;base64,"))
        var bomb = Array(Base64.decode(Array(tiny.utf8))!)
        bomb.replaceSubrange(16..<24, with: [0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0])
        let bombURL = "data:image/png;base64," + Base64.encode(bomb)
        if case .overLimit? = Self.error("<svg><image href=\"\(bombURL)\"/></svg>") {} else {
            // A header that no longer reads (its CRC) drops the reference instead: never decoded either way.
            #expect(!(try Self.output("<svg><image href=\"\(bombURL)\"/></svg>")).contains("data:"))
        }
        #expect(!(try Self.output("<svg><image href=\"data:text/html;base64,PGgxPg==\"/></svg>")).contains("data:"))
    }

    /// Every prefix of a document: a result or a `DecodeError`, never a trap.
    @Test func truncationSweep() {
        let text = Array("""
            <?xml version="1.0"?><!DOCTYPE svg [ ]><svg width="10" height="10"><![CDATA[x]]><g id="a"><rect style="fill:url(#b)"/>\
            </g><use href="#a"/><text>&amp;&#x41;</text></svg>
            """.utf8)
        for cut in 0...text.count {
            _ = try? SVGSanitizer.sanitize(Array(text.prefix(cut)))
        }
        #expect(throws: DecodeError.self) { try SVGSanitizer.sanitize(Array(text.prefix(text.count - 3))) }
    }
}
