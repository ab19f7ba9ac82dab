import KilnCodecs
import KilnModel

/// The SVG sanitiser on bytes (`SVGSanitizer.sanitize`): tokenizer, policy, reference graph,
/// filter pricing and serialisation. Whatever it accepts it must accept again unchanged when
/// fed its own output (the sanitised document is a fixed point), so a rewrite that loses or
/// invents content is a finding too. librsvg is not called: the harness checks Kiln's code.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    guard let first = try? SVGSanitizer.sanitize(bytes) else { return 0 }
    guard let second = try? SVGSanitizer.sanitize(first.document) else {
        fatalError("the sanitised document does not sanitise again")
    }
    if second.document != first.document {
        fatalError("sanitising twice changed the document")
    }
    return 0
}
