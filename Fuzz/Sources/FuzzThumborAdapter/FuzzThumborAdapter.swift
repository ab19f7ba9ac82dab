import KilnHTTP
import KilnModel

/// The thumbor adapter (`ThumborAdapter`) on arbitrary bytes: as the request target with a key
/// (the signature path), and after `/unsafe/` without one (the grammar and the filters).
/// Properties beyond "no crash":
/// - a translation is only ever native options the parser knows, then `-` and the source: its
///   native path parses, or fails with the parser's own `SpecError` (a limit), never anything else;
/// - what parses has a canonical form that parses back to itself (one cache key per variant);
/// - a URL admitted as signed is refused (403) once any character of its signature changes.
private let origins = [AdapterOrigin(name: "photos", baseURL: "https://img.example.com/originals/")]
private let keyed = ThumborAdapter(key: "MY_SECURE_KEY", origins: origins)
private let open = ThumborAdapter(origins: origins)
private let parser = SpecParser()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let path = text.hasPrefix("/") ? text : "/" + text
    check(keyed, path)
    check(open, "/unsafe" + path)
    return 0
}

private func check(_ adapter: ThumborAdapter, _ path: String) {
    guard let adapted = try? adapter.adapt(path: path, query: nil) else { return }
    precondition(adapted.sourcePath.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { !$0.isEmpty },
                 "empty source segment")
    precondition(!adapted.options.contains { $0.contains("/") || $0 == "-" || $0.isEmpty }, "an option that is not one segment")
    if adapted.signing == .verified {
        let segment = Array(path.dropFirst().prefix { $0 != "/" })
        let rest = path.dropFirst(1 + segment.count)
        for i in segment.indices.prefix(27) {
            var tampered = segment
            tampered[i] = tampered[i] == "A" ? "B" : "A"
            do {
                _ = try adapter.adapt(path: "/" + String(tampered) + rest, query: nil)
                preconditionFailure("a changed signature was accepted")
            } catch {
                precondition(error.isBadSignature, "a changed signature was not a 403: \(error.message)")
            }
        }
    }
    let parsed: ImageRequest
    do {
        parsed = try parser.parse(adapted.nativePath, isDecoded: true)
    } catch {
        return
    }
    let again = try? parser.parse("/" + parsed.canonical, isDecoded: true)
    precondition(again?.canonical == parsed.canonical, "canonical form does not re-parse to itself")
}
