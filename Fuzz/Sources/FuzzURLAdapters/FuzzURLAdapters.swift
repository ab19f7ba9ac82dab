import KilnHTTP
import KilnModel

/// The URL adapters (Next.js, Cloudflare, imgix with a token, all on, one origin) on arbitrary
/// bytes as the request target. Properties beyond "no crash":
/// - imgix's `s=` is checked before anything else (a forged one is a 403 whatever the rest says);
/// - Cloudflare's `onerror=redirect` target is one header value: printable ASCII, no space;
/// - a translation is only ever native options the parser knows, then `-` and the source: its
///   native path parses, or fails with the parser's own `SpecError` (a limit), never anything else;
/// - what parses has a canonical form that parses back to itself (one cache key per variant).
private let adapters = AdapterConfiguration.allOn.adapters(
    origins: [AdapterOrigin(name: "photos", baseURL: "https://img.example.com/originals/")])
private let parser = SpecParser()

extension AdapterConfiguration {
    static var allOn: AdapterConfiguration {
        var c = AdapterConfiguration()
        c.nextjs = true
        c.cloudflare = true
        c.imgix = true
        c.imgixToken = "fuzz-token"
        return c
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let request = HTTPRequest(method: "GET", uri: text.hasPrefix("/") ? text : "/" + text)
    guard let adapted = try? adapters.adapt(request) else { return 0 }
    if let location = adapted.onErrorRedirect {
        precondition(location.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }, "a Location that is not one header token")
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
