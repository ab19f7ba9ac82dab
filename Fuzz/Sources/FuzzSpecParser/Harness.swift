import KilnModel

/// SpecParser.parse on arbitrary bytes, as a raw path (REQUEST_URI) and as a decoded one
/// (DOCUMENT_URI), with presets and a custom resolver configured like a real deployment.
private let parser = SpecParser(
    maxDimension: 16_384, maxOperations: 16, maxSigma: 50,
    presets: ["avatar": "rs:96:96:fill/circle/f:webp", "thumb": "w:200/q:70", "blurry": "bl:3/gs",
              "branded": "w:300/wm:logo:0.5:se:10:10"],
    watermarks: ["logo", "stamp"],
    customResolver: { name, arguments throws(SpecError) -> CustomOperation? in
        guard name == "custom" else { return nil }
        guard arguments.count <= 2 else { throw .invalidOption(segment: name, reason: "too many arguments") }
        return CustomOperation(name: name, arguments: arguments, identifier: "custom-v1")
    })

/// A device's answers for `ch:1` / `w:auto` URLs (KilnHTTP's `ClientHints` gives such values).
private struct FixedHints: DeviceHintResolving {
    func resolve(_ use: DeviceHintUse) -> DeviceAnswer { DeviceAnswer(width: 640, dpr: 2, quality: 50) }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    for isDecoded in [false, true] {
        if let request = try? parser.parse(text, isDecoded: isDecoded) {
            precondition(!request.sourcePath.isEmpty, "a request without a source path")
            precondition(request.operations.count <= parser.maxOperations, "more operations than the limit")
            // trim is first; trim: and max_bytes: spell a canonical form that parses back to them
            // (custom operations' identifiers are no URL spelling: such requests are skipped).
            precondition(!request.operations.dropFirst().contains(where: isTrim), "trim is not the first operation")
            if (request.output.maxBytes != nil || request.operations.contains(where: isTrim)),
               !request.operations.contains(where: isCustom), request.canonical.utf8.count < parser.maxPathBytes {
                let again = try? parser.parse("/" + request.canonical, isDecoded: true)
                precondition(again?.operations.first(where: isTrim) == request.operations.first(where: isTrim),
                             "trim does not re-parse to itself")
                precondition(again?.output.maxBytes == request.output.maxBytes, "max_bytes does not re-parse to itself")
            }
        }
        if let request = try? parser.parse(text, isDecoded: isDecoded, hints: FixedHints()) {
            precondition(request.operations.count <= parser.maxOperations, "more operations than the limit (hinted)")
            // The options part of the canonical form (the source path may spell anything).
            let options = request.canonical.dropLast(request.sourcePath.count)
            precondition(!options.contains("w:auto"), "an unresolved w:auto")
        }
    }
    return 0
}

private func isTrim(_ operation: Operation) -> Bool {
    if case .trim = operation { return true }
    return false
}

private func isCustom(_ operation: Operation) -> Bool {
    if case .custom = operation { return true }
    return false
}
