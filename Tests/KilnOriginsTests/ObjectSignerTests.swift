import Testing
import KilnTestSupport
import KilnModel
import KilnPipeline
@testable import KilnOrigins

/// `cache.shared_secret` (issue 36 §7): objects written are signed; a reader with the secret
/// serves only objects signed with it. Someone with write access to the bucket alone can neither
/// plant bytes, nor edit the metadata, nor move a signed object to another key.
@Suite struct ObjectSignerTests {
    typealias F = CachingFixtures
    typealias Bucket = SharedResultStoreTests.MemoryBucket
    static let secret = String(repeating: "fleet-secret-", count: 3)

    static func store(_ bucket: Bucket, secret: String? = ObjectSignerTests.secret) -> SharedResultStore {
        SharedResultStore(reader: bucket, prefix: "kiln/", maxBytes: 1 << 20, retryAfter: 0,
                          signer: secret.map(ObjectSigner.init(secret:)), logger: F.logger(LogRecorder()))
    }

    @Test func aSignedObjectIsServedAndATamperedOneIsNot() throws {
        let bucket = Bucket()
        let signed = Self.store(bucket)
        let key = F.key("w:10", source: "cat.jpg"), other = F.key("w:20", source: "cat.jpg")
        signed.enqueue(SharedResultStoreTests.image(2000, source: "cat.jpg"), for: key)
        #expect(signed.flush() == [.written(2000)])
        let name = signed.objectKey(for: key)
        let object = try #require(bucket[name])
        #expect(object.metadata[ObjectSigner.field]?.utf8.count == 64)
        guard case .hit(let hit) = signed.lookUp(key) else { Issue.record("the signed object was not served"); return }
        #expect(hit.data == object.body)

        // A writer without the secret: its objects (well-formed otherwise) are refused.
        let forger = Self.store(bucket, secret: nil)
        forger.enqueue(SharedResultStoreTests.image(2000, seed: 9, source: "cat.jpg"), for: other)
        _ = forger.flush()
        #expect(signed.lookUp(other).isFailure("it is not signed"))
        #expect(Self.store(bucket, secret: String(repeating: "x", count: 40)).lookUp(key).isFailure("not this fleet's"))

        // Metadata edited under a kept signature, or the object copied to another key: refused.
        var edited = object
        edited.metadata["kiln-digest"] = String(repeating: "cd", count: 16)
        bucket[name] = edited
        #expect(signed.lookUp(key).isFailure("not this fleet's"))
        bucket[signed.objectKey(for: other)] = object
        #expect(signed.lookUp(other).isFailure("not this fleet's"))
        // A body swapped with its SHA-256 and length recomputed changes signed fields too.
        var swapped = object
        swapped.body = Array(repeating: 7, count: 2000)
        swapped.metadata["kiln-sha256"] = Digest.sha256Hex(swapped.body)
        bucket[name] = swapped
        #expect(signed.lookUp(key).isFailure("not this fleet's"))
        // Without a secret the reader still serves what is only well-formed (the old behaviour).
        bucket[name] = object
        guard case .hit = Self.store(bucket, secret: nil).lookUp(key) else { Issue.record("unsigned reader refused"); return }
    }

    @Test func theSignatureIsOverTheKeyAndTheKilnFields() {
        let signer = ObjectSigner(secret: Self.secret)
        let metadata = ["kiln-a": "1", "kiln-b": "2", "content-language": "en"]
        let s = signer.signature(objectKey: "k", metadata: metadata)
        #expect(signer.refusal(objectKey: "k", metadata: signer.signed(objectKey: "k", metadata: metadata)) == nil)
        // Fields other than kiln-* are not signed (S3 may add its own); names are compared lower-cased.
        #expect(signer.signature(objectKey: "k", metadata: ["kiln-b": "2", "KILN-A": "1"]) == s)
        #expect(signer.signature(objectKey: "k2", metadata: metadata) != s)
        #expect(signer.signature(objectKey: "k", metadata: ["kiln-a": "1", "kiln-b": "3"]) != s)
        #expect(signer.refusal(objectKey: "k", metadata: metadata.merging([ObjectSigner.field: "zz"]) { $1 })?.contains("64 hex") == true)
    }
}

extension SharedLookup {
    /// Whether this is a refusal whose reason contains `text`.
    func isFailure(_ text: String) -> Bool {
        if case .failed(let reason) = self { return reason.contains(text) }
        return false
    }
}
