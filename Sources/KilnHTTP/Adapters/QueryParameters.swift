import KilnModel

/// A query string (`a=1&b=x%2Fy`) as an adapter reads it: `&`-separated `name=value` pairs,
/// percent-decoded, `+` as a space (form encoding). A name given twice, a pair without `=`, bad
/// percent-encoding and a NUL are refused: an adapter never guesses which value was meant.
struct QueryParameters {
    private(set) var values: [String: String] = [:]
    /// The names in the order given, for messages.
    private(set) var names: [String] = []

    init(_ query: String, adapter: String, separator: Character = "&") throws(AdapterError) {
        for pair in query.split(separator: separator) {
            guard let eq = pair.firstIndex(of: "=") else {
                throw AdapterError(adapter, "parameter '\(pair.prefix(40))' has no value")
            }
            let name = try QueryParameters.decode(pair[..<eq], adapter: adapter)
            let value = try QueryParameters.decode(pair[pair.index(after: eq)...], adapter: adapter)
            guard values[name] == nil else { throw AdapterError(adapter, "parameter '\(name.prefix(40))' given twice") }
            values[name] = value
            names.append(name)
        }
    }

    subscript(name: String) -> String? { values[name] }

    /// The names not in `known`, in the order given.
    func unknown(_ known: Set<String>) -> [String] {
        names.filter { !known.contains($0) }.map { String($0.prefix(40)) }
    }

    static func decode(_ raw: Substring, adapter: String) throws(AdapterError) -> String {
        let spaced = raw.contains("+") ? Substring(String(raw.map { $0 == "+" ? " " : $0 })) : raw
        do throws(SpecError) {
            return try PathDecoding.decodeSegment(spaced)
        } catch {
            throw AdapterError(adapter, "bad percent-encoding or NUL in '\(raw.prefix(40))'")
        }
    }
}
