import Testing
import KilnHTTP
@testable import KilnServer

/// The start and reload log line about URL signing (issue 41): on or off, the number of keys and
/// never their bytes, the signature size, what unsigned URLs get.
@Suite struct SigningSummaryTests {
    static let key = SigningKey(key: Array(repeating: 0xAB, count: 32), salt: Array(repeating: 0xCD, count: 32))

    @Test func saysWhatTheRunningGenerationAccepts() {
        #expect(SigningSummary.line(URLSignature()).hasPrefix("URL signing off: every URL is served unsigned"))
        #expect(SigningSummary.line(URLSignature(allowUnsigned: false)).contains("unsigned URLs refused"))
        let one = SigningSummary.line(URLSignature(keys: [Self.key], size: 16, allowUnsigned: false))
        #expect(one == "URL signing on: 1 key, 16-byte signatures, unsigned URLs refused")
        let two = SigningSummary.line(URLSignature(keys: [Self.key, Self.key], allowUnsigned: true))
        #expect(two == "URL signing on: 2 keys, 32-byte signatures, unsigned URLs allowed under /unsafe/")
        #expect(!two.lowercased().contains("abab") && !two.lowercased().contains("cdcd"))
    }
}
