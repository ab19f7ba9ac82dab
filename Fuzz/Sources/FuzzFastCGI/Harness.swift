import KilnFastCGI

/// The FastCGI record reader (FastCGIRequestParser) on arbitrary bytes, as a connection would
/// deliver them: once whole and once in pieces whose size the first byte picks. Beyond "no
/// crash": both ways give the same requests and the same verdict (a protocol error or not), and
/// no request exceeds the limits.
private let limits = FastCGIRequestParser.Limits(maxParamsBytes: 4096, maxParams: 64, maxRecords: 256)

private struct Run: Equatable {
    var requests: [FastCGIRequest] = []
    var failed = false
    var closed = false
}

private func run(_ bytes: [UInt8], piece: Int) -> Run {
    var parser = FastCGIRequestParser(limits: limits)
    var result = Run()
    var offset = 0
    repeat {
        let end = min(bytes.count, offset + piece)
        var chunk = Array(bytes[offset..<end])
        offset = end
        // After a complete request the parser waits for the next feed: drain it with empty ones.
        while true {
            do {
                let out = try parser.feed(chunk)
                chunk = []
                if out.close { result.closed = true; return result }
                guard let request = out.request else { break }
                precondition(request.params.count <= limits.maxParams, "more params than the limit")
                result.requests.append(request)
            } catch {
                result.failed = true
                return result
            }
        }
    } while offset < bytes.count
    return result
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let whole = run(bytes, piece: max(bytes.count, 1))
    let piece = 1 + Int(bytes.first ?? 0) % 17
    let pieces = run(bytes, piece: piece)
    precondition(whole == pieces, "the same bytes in pieces of \(piece) read differently")
    return 0
}
