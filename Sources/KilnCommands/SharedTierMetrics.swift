import KilnFastCGI
import KilnServer

/// The shared store's counters for `kiln cache stats`, read from the local master's
/// `/_kiln/metrics` on its status socket (`server.status_listen`, with `server.peer_secret`): every
/// series whose name starts with `kiln_shared_cache_` (reads by result, writes by result, bytes
/// written), grouped by name without the prefix, one value per label value.
struct SharedTierMetrics {
    static let prefix = "kiln_shared_cache_"

    /// Series name without the prefix → (label values joined by `,`, or "" without labels) → value.
    var series: [(name: String, values: [(label: String, value: Double)])] = []
    /// Why nothing could be read (no answer, not a 200); nil when read.
    var problem: String?
    var address: String

    /// Nil when the settings name no status socket (`status_listen = off`).
    static func read(_ server: ServerConfiguration, timeout: Double = 3) -> SharedTierMetrics? {
        guard let socket = StatusSocket(server) else { return nil }
        var out = SharedTierMetrics(address: socket.address.description)
        do throws(FastCGIClient.Failure) {
            let r = try socket.request("GET", "/_kiln/metrics", timeout: timeout)
            guard r.status == 200 else {
                out.problem = "\(r.status) \(PurgeTiers.firstLine(r.text))"
                return out
            }
            out.series = parse(r.text)
        } catch {
            out.problem = error.description
        }
        return out
    }

    /// The `kiln_shared_cache_` series of a Prometheus text exposition, in the order seen.
    static func parse(_ text: String) -> [(name: String, values: [(label: String, value: Double)])] {
        var out: [(name: String, values: [(label: String, value: Double)])] = []
        for line in text.split(separator: "\n") where line.hasPrefix(prefix) {
            let parts = line.split(separator: " ")
            guard parts.count >= 2, let value = Double(parts[1]) else { continue }
            let full = parts[0]
            let name = String(full.prefix { $0 != "{" }.dropFirst(prefix.count))
            var label = ""
            if let open = full.firstIndex(of: "{"), full.hasSuffix("}") {
                // `result="hit",other="x"` → `hit,x`
                label = full[full.index(after: open)..<full.index(before: full.endIndex)]
                    .split(separator: ",").map { pair in String(pair.drop { $0 != "=" }.dropFirst().filter { $0 != "\"" }) }
                    .joined(separator: ",")
            }
            if let i = out.firstIndex(where: { $0.name == name }) {
                out[i].values.append((label, value))
            } else {
                out.append((name, [(label, value)]))
            }
        }
        return out
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(v)) : String(v)
    }

    /// For the text report.
    var lines: [String] {
        if let problem { return ["shared store (metrics of \(address)): unknown: \(problem)"] }
        if series.isEmpty { return ["shared store (metrics of \(address)): no \(SharedTierMetrics.prefix)* series (cache.shared is not set, or no server runs there)"] }
        let width = series.map(\.name.count).max() ?? 0
        return ["shared store (metrics of \(address))"] + series.map { s in
            let name = s.name + ":" + String(repeating: " ", count: width - s.name.count)
            let values = s.values.map { $0.label.isEmpty ? SharedTierMetrics.number($0.value) : "\($0.label) \(SharedTierMetrics.number($0.value))" }
            return "  \(name) \(values.joined(separator: ", "))"
        }
    }

    /// `{"address":…,"error":…|null,"series":{"reads_total":{"hit":1,…},"written_bytes_total":123}}`.
    var json: String {
        let body = series.map { s -> String in
            let value: String
            if s.values.count == 1, s.values[0].label.isEmpty {
                value = SharedTierMetrics.number(s.values[0].value)
            } else {
                value = "{" + s.values.map { "\(Output.jsonString($0.label)):\(SharedTierMetrics.number($0.value))" }.joined(separator: ",") + "}"
            }
            return "\(Output.jsonString(s.name)):\(value)"
        }.joined(separator: ",")
        return "{\"address\":\(Output.jsonString(address)),\"error\":\(problem.map(Output.jsonString) ?? "null"),\"series\":{\(body)}}"
    }
}
