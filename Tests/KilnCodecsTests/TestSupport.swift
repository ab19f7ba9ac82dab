import KilnModel
import KilnCodecs
import Testing

/// The `DecodeError` a decode throws, nil when it succeeds (any other error is a test failure).
func decodeFailure<T>(_ body: () throws -> T) -> DecodeError? {
    do {
        _ = try body()
        return nil
    } catch let error as DecodeError {
        return error
    } catch {
        Issue.record(error)
        return nil
    }
}

extension DecodeError {
    var isCorrupt: Bool { if case .corrupt = self { true } else { false } }
    var isOverLimit: Bool { if case .overLimit = self { true } else { false } }
    var message: String {
        switch self {
        case .corrupt(let text), .overLimit(let text), .unsupported(let text): text
        }
    }
}

/// The decoder for a corpus row's libmagic type.
func corpusDecoder(for entry: Corpus.Entry) -> (any ImageDecoding)? {
    entry.format.map { Codecs.decoder(for: $0) }
}

/// Seconds taken by `body`.
func seconds(_ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let elapsed = try clock.measure(body)
    return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
}

/// Reads and decodes every prefix of `data` (every `step` bytes, and the whole file less one):
/// each must end in a result or a `DecodeError`, never a trap. Returns the prefixes' decode errors.
func decodePrefixes(_ data: [UInt8], step: Int = 1, with decoder: any ImageDecoding) -> [DecodeError?] {
    let options = DecodeOptions(limits: DecodeLimits(maxPixels: 1 << 20))
    var lengths = Array(stride(from: 0, to: data.count, by: step))
    if lengths.last != data.count - 1 { lengths.append(data.count - 1) }
    return lengths.map { length in
        let prefix = Array(data[..<length])
        _ = decodeFailure { try decoder.readHeader(prefix) }
        return decodeFailure { try decoder.decode(prefix, options: options) }
    }
}
