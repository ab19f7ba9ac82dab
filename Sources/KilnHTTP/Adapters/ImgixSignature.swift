import Crypto
import KilnModel

/// imgix's secure URLs: `s=` is the MD5 (lowercase hex) of the source's token, the path and, when
/// the URL has other parameters, `?` and the query without `s`, all exactly as the URL carries them
/// (percent-encoded, in the order written): what imgix's client libraries compute
/// (`UrlBuilder(sign_key=…)` in imgix-python 4: `md5(token + path + query)`, `s` appended last).
/// The check reads the raw request target, never a decoded or re-ordered form, so a URL is
/// admitted only as it was signed.
struct ImgixSignature: Sendable {
    /// The token (`adapters.imgix_token`); empty: no token, and `s=` is refused.
    let token: String

    /// How the URL is signed: `.verified` for a good `s=`, `.unsignedWhileKeyed` for none while a
    /// token is set, `.unsigned` for none without one. A wrong or malformed `s=` throws
    /// `AdapterError.badSignature` (403), an `s=` without a token a 400.
    func check(path: String, rawQuery: String, adapter: String) throws(AdapterError) -> AdaptedURL.Signing {
        let (given, rest) = try ImgixSignature.split(rawQuery, adapter: adapter)
        guard let given else { return token.isEmpty ? .unsigned : .unsignedWhileKeyed }
        guard !token.isEmpty else {
            throw AdapterError(adapter, "'s' (imgix's signature) given, but no imgix token is configured (adapters.imgix_token)")
        }
        // imgix's libraries write lowercase hex; uppercase is the same digest.
        let digest = given.lowercased()
        guard digest.utf8.count == 32, digest.utf8.allSatisfy({ ImgixSignature.isLowerHex($0) }) else {
            throw AdapterError.badSignature(adapter, "s= is not an imgix signature (32 hex digits)")
        }
        guard ImgixSignature.constantTimeEqual(Array(digest.utf8), Array(signature(path: path, query: rest).utf8)) else {
            throw AdapterError.badSignature(adapter)
        }
        return .verified
    }

    /// The signature of `path` (raw, with its leading `/`) and `query` (raw, without `s`; empty: none).
    func signature(path: String, query: String) -> String {
        let base = token + path + (query.isEmpty ? "" : "?" + query)
        return Insecure.MD5.hash(data: Array(base.utf8)).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }

    /// The raw value of the `s` pair (nil without one) and the rest of the query as written,
    /// without that pair. The name is compared decoded (`%73` is `s` too, as `QueryParameters`
    /// reads it); the value must be plain hex, so it needs no decoding.
    static func split(_ rawQuery: String, adapter: String) throws(AdapterError) -> (signature: String?, rest: String) {
        var signature: String?
        var rest: [Substring] = []
        for pair in rawQuery.split(separator: "&", omittingEmptySubsequences: false) {
            let name = pair.prefix { $0 != "=" }
            guard pair.count > name.count, (try QueryParameters.decode(name, adapter: adapter)) == "s" else {
                rest.append(pair)
                continue
            }
            // A second `s` is refused by QueryParameters before this runs; keep the first.
            if signature == nil { signature = String(pair.dropFirst(name.count + 1)) } else { rest.append(pair) }
        }
        return (signature, rest.joined(separator: "&"))
    }

    static func isLowerHex(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 97 && c <= 102)
    }

    /// Equal bytes, compared in a time that depends only on the length (both are 32 here).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for i in a.indices { difference |= a[i] ^ b[i] }
        return difference == 0
    }
}
