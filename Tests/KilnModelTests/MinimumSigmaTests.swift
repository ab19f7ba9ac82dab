import Testing
@testable import KilnModel

/// Sigmas below `SpecParser.minimumSigma` (0.1) change no pixel: the step is dropped, so the URL
/// shares the canonical request (the cache key) of the URL without it. Zero, negatives and
/// exponents stay refused by the number grammar.
@Suite struct MinimumSigmaTests {
    let parser = SpecParser()

    @Test(arguments: ["bl:0.00000000000000000000000000000001", "bl:0.0001", "blur:0.09", "sh:0.00001",
                      "sharpen:0.0999"])
    func tinySigmasAreDropped(step: String) throws {
        let with = try parser.parse("/w:300/\(step)/gs/a.jpg")
        let without = try parser.parse("/w:300/gs/a.jpg")
        #expect(with.operations == without.operations)
        #expect(with.canonical == without.canonical)
    }

    @Test func theMinimumItselfIsKept() throws {
        #expect(try parser.parse("/bl:0.1/a.jpg").operations == [.blur(sigma: 0.1)])
        #expect(try parser.parse("/sh:0.1/a.jpg").operations == [.sharpen(sigma: 0.1)])
        #expect(SpecParser.minimumSigma == 0.1)
    }

    @Test(arguments: ["bl:0", "bl:0.0", "bl:-1", "bl:1e-300", "sh:0", "sh:1e-5"])
    func zeroNegativeAndExponentsStayRefused(step: String) {
        #expect(throws: SpecError.self) { try parser.parse("/\(step)/a.jpg") }
    }
}
