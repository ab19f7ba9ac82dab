import Foundation
import KilnModel
import Testing
@testable import KilnHTTP

/// The edge recipe's header normalisation (`EdgeRecipe`) against the declared request inputs
/// (`RequestInput`) and the shipped `varnish/kiln.vcl` (its generated block; `KILN_DOCS_UPDATE=1`
/// rewrites it).
@Suite struct EdgeRecipeTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let vclURL = root.appendingPathComponent("varnish/kiln.vcl")

    @Test func theShippedVCLHoldsTheGeneratedBlock() throws {
        let generated = EdgeRecipe(http: HTTPConfiguration()).vcl
        var lines = try String(contentsOf: Self.vclURL, encoding: .utf8).components(separatedBy: "\n")
        guard let start = lines.firstIndex(where: { $0.hasPrefix("# generated: EdgeRecipe") }),
              let stop = lines[start...].firstIndex(where: { $0.hasPrefix("# end generated: EdgeRecipe") }) else {
            Issue.record("varnish/kiln.vcl has no generated EdgeRecipe block")
            return
        }
        if ProcessInfo.processInfo.environment["KILN_DOCS_UPDATE"] == "1" {
            lines.replaceSubrange((start + 1)..<stop, with: generated.components(separatedBy: "\n"))
            try lines.joined(separator: "\n").write(to: Self.vclURL, atomically: true, encoding: .utf8)
            return
        }
        #expect(lines[(start + 1)..<stop].joined(separator: "\n") == generated,
                "varnish/kiln.vcl differs from EdgeRecipe: run KILN_DOCS_UPDATE=1 swift test --filter EdgeRecipe")
    }

    /// Every header an answer can vary on is reduced before the lookup: set or unset by the
    /// generated routine, or (`Accept`) by its own, and both run in vcl_recv.
    @Test func everyRequestInputIsNormalised() throws {
        let vcl = try String(contentsOf: Self.vclURL, encoding: .utf8)
        let recipe = EdgeRecipe(http: HTTPConfiguration()).vcl
        for input in RequestInput.allCases {
            let body = input == .accept ? vcl : recipe
            for name in input.names {
                #expect(body.contains("set req.http.\(name) =") || body.contains("unset req.http.\(name);"),
                        "\(name) is not normalised")
            }
        }
        #expect(vcl.contains("call kiln_normalize_accept;"))
        #expect(vcl.contains("call kiln_normalize_hints;"))
        #expect(vcl.contains("import std;"))
    }

    @Test func viewportBreakpointsKeepEveryRatiosAnswer() {
        var http = HTTPConfiguration()
        http.hintWidths = [320, 640, 960, 1280, 1920]
        let recipe = EdgeRecipe(http: http)
        let breakpoints = recipe.viewportBreakpoints
        let hints = ClientHints(headers: [:], http: http)
        // Every viewport answers like the breakpoint it is reduced to, for every ratio a hint can give.
        for viewport in 1...2_100 {
            let representative = breakpoints.first { $0 >= viewport } ?? (breakpoints.last! + 1)
            for ratio in EdgeRecipe.ratios {
                let a = hints.snapped(Int((Double(viewport) * ratio).rounded(.up)))
                let b = hints.snapped(Int((Double(representative) * ratio).rounded(.up)))
                #expect(a == b, "viewport \(viewport) vs \(representative) at ratio \(ratio)")
                if a != b { return }
            }
        }
    }

    @Test func listedOriginsAreKeptOthersDropped() {
        var http = HTTPConfiguration()
        http.allowOrigin = ["https://a.example", "https://b.example:8443"]
        let vcl = EdgeRecipe(http: http).vcl
        #expect(vcl.contains(#"req.http.Origin !~ "^(https://a\.example|https://b\.example:8443)$""#))
        http.allowOrigin = ["*"]
        #expect(EdgeRecipe(http: http).vcl.contains("unset req.http.Origin;"))
    }
}
