import Crypto
import KilnModel

/// Authenticity for the shared result store (`cache.shared_secret`): every object Kiln writes
/// carries `kiln-signature`, an HMAC-SHA256 under the fleet's secret of the object's key and its
/// `kiln-*` metadata. The metadata hold the body's SHA-256 and length (checked on every read), so
/// the signature covers the body too. A reader with the secret refuses an object whose signature
/// is missing or wrong: someone with write access to the bucket but not the secret can delete
/// objects (a miss, rendered again) but not make a host serve bytes of their choosing, nor move an
/// object to another key (the key is signed).
///
/// The signed text, for object key `k`: `kiln-object/1\n<k>\n` then one line `name:value\n` per
/// `kiln-*` metadata field but the signature, sorted by name (S3 lower-cases metadata names).
public struct ObjectSigner: Sendable, Equatable {
    /// The metadata field the signature travels in.
    public static let field = "kiln-signature"
    let key: SymmetricKey

    public init(secret: String) {
        key = SymmetricKey(data: Array(secret.utf8))
    }

    public static func == (a: ObjectSigner, b: ObjectSigner) -> Bool {
        a.key.withUnsafeBytes { Array($0) } == b.key.withUnsafeBytes { Array($0) }
    }

    /// The text signed for an object at `objectKey` with `metadata`.
    static func signedText(objectKey: String, metadata: [String: String]) -> [UInt8] {
        let fields = metadata.filter { $0.key.lowercased().hasPrefix("kiln-") && $0.key.lowercased() != field }
            .map { ($0.key.lowercased(), $0.value) }
            .sorted { $0.0 < $1.0 }
        var text = "kiln-object/1\n\(objectKey)\n"
        for (name, value) in fields { text += "\(name):\(value)\n" }
        return Array(text.utf8)
    }

    /// The signature of an object at `objectKey` with `metadata`: 64 lower-case hex digits.
    public func signature(objectKey: String, metadata: [String: String]) -> String {
        let mac = HMAC<SHA256>.authenticationCode(for: Self.signedText(objectKey: objectKey, metadata: metadata), using: key)
        return Hex.lowercase(Array(mac))
    }

    /// `metadata` with its signature added.
    public func signed(objectKey: String, metadata: [String: String]) -> [String: String] {
        var signed = metadata
        signed[Self.field] = signature(objectKey: objectKey, metadata: metadata)
        return signed
    }

    /// Why an object at `objectKey` with `metadata` must not be served, nil when its signature
    /// is this fleet's. Compared in constant time.
    public func refusal(objectKey: String, metadata: [String: String]) -> String? {
        guard let given = metadata[Self.field] else { return "it is not signed (cache.shared_secret is set)" }
        guard let bytes = Hex.decode(given), bytes.count == 32 else { return "its kiln-signature is not 64 hex digits" }
        let valid = HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: Self.signedText(objectKey: objectKey, metadata: metadata),
                                                           using: key)
        return valid ? nil : "its kiln-signature is not this fleet's (cache.shared_secret)"
    }
}
