import KilnHTTP
import KilnModel

/// imgproxy's adapter (`ImgproxyAdapter`, a key and salt configured, one origin) on arbitrary
/// bytes as the path after the signature. The harness signs each path itself with the key, so
/// the translation is reached, then checks beyond "no crash":
/// - a claimed URL signed with the key is `.verified`; the same URL with one signature byte
///   changed is refused as a bad signature (403), never translated;
/// - a translation is native options the parser knows (single segments), then `-` and the
///   source: its native path parses, or fails with the parser's own `SpecError`;
/// - what parses has a canonical form that parses back to itself (one cache key per variant).
private let key = SigningKey(key: Array("fuzz-key".utf8), salt: Array("fuzz-salt".utf8))
private let adapter = ImgproxyAdapter(signature: URLSignature(keys: [key], size: 32),
                                      origins: [AdapterOrigin(name: "photos", baseURL: "https://img.example.com/originals/")],
                                      watermark: "logo")
private let parser = SpecParser(watermarks: ["logo"])

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let path = text.unicodeScalars.first == "/" ? text : "/" + text
    let signature = URLSignature.signature(of: path, key: key)
    let adapted: AdaptedURL?
    do {
        adapted = try adapter.adapt(path: "/" + signature + path, query: nil)
    } catch {
        precondition(!error.isBadSignature, "a URL signed with the key was refused as badly signed")
        return 0
    }
    guard let adapted else { return 0 }
    precondition(adapted.signing == .verified, "a signed URL was not verified")
    var tampered = Array(signature)
    tampered[5] = tampered[5] == "A" ? "B" : "A"
    do {
        _ = try adapter.adapt(path: "/" + String(tampered) + path, query: nil)
        preconditionFailure("a tampered signature was accepted")
    } catch {
        precondition(error.isBadSignature, "a tampered signature was not refused as one: \(error.message)")
    }
    precondition(adapted.sourcePath.split(separator: "/").allSatisfy { !$0.isEmpty }, "empty source segment")
    precondition(!adapted.options.contains { $0.contains("/") || $0 == "-" }, "an option that is not one segment")
    let parsed: ImageRequest
    do {
        parsed = try parser.parse(adapted.nativePath, isDecoded: true)
    } catch {
        return 0
    }
    let again = try? parser.parse("/" + parsed.canonical, isDecoded: true)
    precondition(again?.canonical == parsed.canonical, "canonical form does not re-parse to itself")
    return 0
}
