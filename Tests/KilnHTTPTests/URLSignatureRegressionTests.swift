import Foundation
import KilnModel
import KilnHTTP
import Testing

/// Replays Tests/fuzz-regressions/FuzzURLSignature/ (inputs of the URL signature harness,
/// Fuzz/Sources/FuzzURLSignature) through the same check: each ends in a verdict, never a trap,
/// and none of them is accepted as signed (they are forged, padded or re-pointed paths).
@Suite struct URLSignatureRegressionTests {
    static let folder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fuzz-regressions/FuzzURLSignature")

    static let names: [String] = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { !$0.hasPrefix(".") }.sorted()

    static let signature = URLSignature(keys: [SigningKey(key: Array("secret".utf8), salt: Array("hello".utf8))],
                                        size: 32, allowUnsigned: false)

    @Test func theFolderHasInputs() {
        #expect(!Self.names.isEmpty)
    }

    @Test(arguments: names)
    func replays(_ name: String) throws {
        let data = try Data(contentsOf: Self.folder.appendingPathComponent(name))
        let text = String(decoding: data, as: UTF8.self)
        #expect(throws: SignatureError.self) { try Self.signature.verify(rawPath: text) }
    }
}
