import Testing
import KilnTestBytes
@testable import KilnHTTP
import KilnModel

@Suite struct URLSignatureTests {
    static func hex(_ s: String) -> [UInt8] {
        var out: [UInt8] = []
        var it = Array(s.utf8).makeIterator()
        while let h = it.next(), let l = it.next() {
            out.append(UInt8(String(decoding: [h, l], as: UTF8.self), radix: 16)!)
        }
        return out
    }

    // imgproxy's published example (docs "Signing a URL"): key "secret", salt "hello".
    static let imgproxyKey = SigningKey(key: hex("736563726574"), salt: hex("68656C6C6F"))
    static let imgproxyPath = "/rs:fill:300:400:0/g:sm/aHR0cDovL2V4YW1w/bGUuY29tL2ltYWdl/cy9jdXJpb3NpdHku/anBn.png"
    static let imgproxySignature = "oKfUtW34Dvo2BGQehJFR4Nr0_rIjOtdtzJ3QFsUcXH8"

    let key1 = SigningKey(key: hex("943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881"),
                          salt: hex("520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5"))
    let key2 = SigningKey(key: Array(repeating: 7, count: 32), salt: Array(repeating: 9, count: 16))

    @Test func imgproxysPublishedExample() throws {
        #expect(URLSignature.signature(of: Self.imgproxyPath, key: Self.imgproxyKey) == Self.imgproxySignature)
        let s = URLSignature(keys: [Self.imgproxyKey])
        let v = try s.verify(rawPath: "/" + Self.imgproxySignature + Self.imgproxyPath)
        #expect(v == .init(kind: .signed, path: Self.imgproxyPath))
        #expect(s.sign(Self.imgproxyPath) == "/" + Self.imgproxySignature + Self.imgproxyPath)
    }

    @Test func forgedTruncatedAndMalformedAreRefused() throws {
        let s = URLSignature(keys: [key1])
        let signed = try #require(s.sign("/rs:300:200/cat.jpg"))
        #expect(try s.verify(rawPath: signed).path == "/rs:300:200/cat.jpg")
        let sig = String(signed.dropFirst().prefix { $0 != "/" })
        // One character changed.
        let forged = "/" + String(sig.dropLast()) + (sig.last == "A" ? "B" : "A") + "/rs:300:200/cat.jpg"
        #expect(throws: SignatureError.self) { try s.verify(rawPath: forged) }
        // Truncated signature: wrong length.
        #expect(throws: SignatureError.malformed) { try s.verify(rawPath: "/" + sig.prefix(20) + "/rs:300:200/cat.jpg") }
        // Padding, standard base64 characters, empty.
        #expect(throws: SignatureError.malformed) { try s.verify(rawPath: "/" + sig + "=/rs:300:200/cat.jpg") }
        #expect(throws: SignatureError.missing) { try s.verify(rawPath: "//rs:300:200/cat.jpg") }
        #expect(throws: SignatureError.missing) { try s.verify(rawPath: "/" + sig) }
        #expect(throws: SignatureError.notAPath) { try s.verify(rawPath: "http://x/" + sig + "/a.jpg") }
    }

    @Test func rePointedPathsAreRefused() throws {
        let s = URLSignature(keys: [key1])
        let signed = try #require(s.sign("/rs:10:10/cat.jpg"))
        let sig = String(signed.dropFirst().prefix { $0 != "/" })
        for path in ["/rs:10:10/dog.jpg", "/rs:10:10/cat.jpg/", "/rs:10:10//cat.jpg", "/rs%3A10%3A10/cat.jpg",
                     "/rs:10:10/c%61t.jpg", "/rs:10:10/" + sig + "/cat.jpg", "/" + sig + "/rs:10:10/cat.jpg"] {
            #expect(throws: SignatureError.mismatch, "\(path)") { try s.verify(rawPath: "/" + sig + path) }
        }
        // Signature moved to a later position.
        #expect(throws: SignatureError.self) { try s.verify(rawPath: "/rs:10:10/" + sig + "/cat.jpg") }
    }

    @Test func truncatedSignatureSize() throws {
        let s = URLSignature(keys: [key1], size: 8)
        let signed = try #require(s.sign("/w:100/a.png"))
        let sig = signed.dropFirst().prefix { $0 != "/" }
        #expect(sig.count == 11)
        #expect(try s.verify(rawPath: signed).kind == .signed)
        let full = URLSignature(keys: [key1])
        #expect(String(sig) == String(URLSignature.signature(of: "/w:100/a.png", key: key1).prefix(10)) + String(sig.suffix(1)))
        #expect(throws: SignatureError.malformed) { try full.verify(rawPath: signed) }
    }

    @Test func rotationAcceptsEveryConfiguredPair() throws {
        let both = URLSignature(keys: [key1, key2])
        let old = try #require(URLSignature(keys: [key2]).sign("/w:50/a.jpg"))
        let new = try #require(URLSignature(keys: [key1]).sign("/w:50/a.jpg"))
        #expect(try both.verify(rawPath: old).kind == .signed)
        #expect(try both.verify(rawPath: new).kind == .signed)
        #expect(throws: SignatureError.mismatch) { try URLSignature(keys: [key1]).verify(rawPath: old) }
    }

    @Test func unsafeAndUnsignedPaths() throws {
        let noKeys = URLSignature()
        #expect(try noKeys.verify(rawPath: "/unsafe/w:5/a.jpg") == .init(kind: .unsafe, path: "/w:5/a.jpg"))
        #expect(try noKeys.verify(rawPath: "/w:5/a.jpg") == .init(kind: .unsigned, path: "/w:5/a.jpg"))
        let closed = URLSignature(allowUnsigned: false)
        #expect(throws: SignatureError.unsignedRefused) { try closed.verify(rawPath: "/w:5/a.jpg") }
        let keyed = URLSignature(keys: [key1], allowUnsigned: false)
        #expect(throws: SignatureError.unsignedRefused) { try keyed.verify(rawPath: "/unsafe/w:5/a.jpg") }
        // A first segment no signature spells is an unsigned URL, and says so; base64 of the wrong
        // size is a malformed signature.
        #expect(throws: SignatureError.unsignedRefused) { try keyed.verify(rawPath: "/w:5/a.jpg") }
        #expect(throws: SignatureError.unsignedRefused) { try keyed.verify(rawPath: "/a.jpg") }
        #expect(throws: SignatureError.malformed) { try keyed.verify(rawPath: "/abcd/a.jpg") }
        #expect(SignatureError.unsignedRefused.message.contains("requires signed URLs"))
        let keyedOpen = URLSignature(keys: [key1], allowUnsigned: true)
        #expect(try keyedOpen.verify(rawPath: "/unsafe/w:5/a.jpg").kind == .unsafe)
    }

    @Test func base64URLRoundTripsAndIsStrict() {
        for n in 0..<40 {
            let bytes = (0..<n).map { UInt8(($0 * 37 + n) & 0xff) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
        #expect(Base64URL.decode("AB") == nil)  // non-zero trailing bits
        #expect(Base64URL.decode("AA") == [0])
        #expect(Base64URL.decode("A") == nil)
        #expect(Base64URL.decode("a+b/") == nil)
        #expect(Base64URL.decode("AA==") == nil)
    }

    /// Edge cases, seeded random strings and seeded mutations of a signed path: each one is a
    /// `SignatureError` (`.notAPath` exactly when it does not start with `/`) or a verified path
    /// that is the input's own tail: `.signed` only for what the key signs to that very string,
    /// `.unsafe` only after `/unsafe`. Each answer comes at once.
    @Test func arbitraryBytesNeverCrash() throws {
        let s = URLSignature(keys: [key1])
        let signed = try #require(s.sign("/rs:300:200/f:webp/cat.jpg"))
        var inputs = ["", "/", "//", "///", "/\u{0}/x", "/%/x", "/🙂/x", "/unsafe", "/unsafe/", "unsafe/x",
                      "/" + String(repeating: "A", count: 43) + "/", "/" + String(repeating: "A", count: 43) + "/x", signed]
        var rng = SplitMix64(state: 0x4B69_6C6E_5369_676E)
        // Characters that matter to the parser (separators, base64, percent, NUL, multi-byte) and a few others.
        let alphabet = Array("/////AaZz09-_+=%.:unsafe\u{0}\u{7f}é🙂 ")
        for _ in 0..<2000 {
            let n = Int.random(in: 0...80, using: &rng)
            inputs.append(String((0..<n).map { _ in alphabet.randomElement(using: &rng)! }))
        }
        var signedBytes = Array(signed.utf8)
        for _ in 0..<2000 {
            var bytes = signedBytes
            for _ in 0..<Int.random(in: 1...3, using: &rng) {
                bytes[Int.random(in: 0..<bytes.count, using: &rng)] = UInt8.random(in: 0x20...0x7e, using: &rng)
            }
            inputs.append(String(decoding: bytes, as: UTF8.self))
        }
        signedBytes.removeAll()

        let clock = ContinuousClock()
        var slowest = Duration.zero
        var outcomes: [String: Int] = [:]
        for path in inputs {
            let started = clock.now
            let result: Result<URLSignature.VerifiedPath, SignatureError>
            do throws(SignatureError) { result = .success(try s.verify(rawPath: path)) } catch { result = .failure(error) }
            slowest = max(slowest, clock.now - started)
            switch result {
            case .failure(let error):
                outcomes["\(error)", default: 0] += 1
                #expect((error == .notAPath) == !path.hasPrefix("/"), "\(path.debugDescription): \(error)")
            case .success(let verified):
                outcomes["\(verified.kind)", default: 0] += 1
                #expect(path.hasSuffix(verified.path) && (verified.path.isEmpty || verified.path.utf8.first == UInt8(ascii: "/")), "\(path.debugDescription) gave \(verified)")
                switch verified.kind {
                case .signed: #expect(s.sign(verified.path) == path, "\(path.debugDescription) verified as signed")
                case .unsafe: #expect(path == "/unsafe" + verified.path, "\(path.debugDescription) verified as unsafe")
                case .unsigned: Issue.record("\(path.debugDescription): unsigned although a key is configured")
                }
            }
        }
        #expect(slowest < .milliseconds(500), "the slowest verification took \(slowest)")
        // The inputs reach every refusal and both acceptances (the mutated copies that kept the
        // signature and the path, and `/unsafe/`).
        #expect(Set(outcomes.keys).isSuperset(of: ["notAPath", "missing", "malformed", "mismatch", "signed", "unsafe"]), "\(outcomes)")
    }
}
