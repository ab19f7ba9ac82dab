import KilnHTTP

/// URLSignature.verify on arbitrary bytes as the raw request path, with two key pairs (rotation)
/// at the full size and one truncated to 8 bytes. Properties beyond "no crash":
/// - a path that verifies as signed still verifies after re-signing its remainder with the first
///   key (the signature covers exactly the remainder);
/// - URL-safe base64 is strict: whatever decodes encodes back to the same text.
private let full = URLSignature(keys: [
    SigningKey(key: Array("secret".utf8), salt: Array("hello".utf8)),
    SigningKey(key: [0x94, 0x3b, 0x42, 0x1c], salt: [0x52, 0x0f, 0x98, 0x6b]),
], size: 32, allowUnsigned: false)
private let short = URLSignature(keys: [SigningKey(key: Array("k".utf8), salt: [])], size: 8, allowUnsigned: true)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for signature in [full, short] {
        guard let verified = try? signature.verify(rawPath: text) else { continue }
        if verified.kind == .signed {
            precondition(text.hasSuffix(verified.path), "the verified remainder is not the end of the path")
            guard let resigned = signature.sign(verified.path) else { preconditionFailure("cannot re-sign") }
            precondition((try? signature.verify(rawPath: resigned))?.path == verified.path, "re-signed path refused")
        }
    }
    let segment = text.split(separator: "/", omittingEmptySubsequences: false).dropFirst().first ?? ""
    if let bytes = Base64URL.decode(segment) {
        precondition(Base64URL.encode(bytes) == String(segment), "two spellings of one signature")
    }
    // And a signature made for this text as a path is accepted.
    let path = "/" + text.filter { $0 != "?" && $0 != "#" }
    if let signed = full.sign(path) {
        precondition((try? full.verify(rawPath: signed))?.path == path, "own signature refused")
    }
    return 0
}
