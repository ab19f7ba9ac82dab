import Crypto
import KilnModel

/// thumbor's URL signature (thumbor 7.8, libthumbor's `base64_hmac_sha1` signer): HMAC-SHA1 with
/// the security key over the raw request path after `/<signature>/` (tornado's
/// `request.path`: still percent-encoded, without the query), URL-safe base64 with padding
/// (28 characters ending with `=`). thumbor strips the segment as written or percent-encoded
/// (`%3D`), so both spellings are checked the same way.
struct ThumborSignature: Sendable {
    /// The security key's bytes (`adapters.thumbor_key`, UTF-8, as thumbor encodes it).
    let key: [UInt8]

    init(key: String) {
        self.key = Array(key.utf8)
    }

    /// The signature thumbor writes for `url` (the raw path after `/<signature>/`).
    func signature(of url: Substring) -> String {
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(url.utf8), using: SymmetricKey(data: key))
        return Base64.encode(Array(mac), alphabet: .url, padding: true)
    }

    /// Whether `given` (as written in the URL) signs `url`; the comparison's time depends on the
    /// lengths only.
    func isValid(_ given: String, for url: Substring) -> Bool {
        let written = given.hasSuffix("%3D") ? String(given.dropLast(3)) + "=" : given
        return URLSignature.constantTimeEqual(Array(signature(of: url).utf8), Array(written.utf8)) == 1
    }
}
