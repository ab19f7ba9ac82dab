/// Turns a histogram's new counts (per bucket, not cumulative) and the new sum into observations
/// to record into a swift-prometheus histogram, which only takes observations: each bucket's count
/// is recorded at one value inside that bucket, and the values are chosen so that their total is
/// the real sum. Such values always exist, as the real observations were inside the same buckets.
///
/// The cost is one `record` per observation since the last scrape, in the master.
public enum HistogramReplay {
    /// `counts` has `bounds.count + 1` entries (the last: above the last bound); `sum` is in the
    /// bounds' unit. Returns (value, how many times) pairs, empty buckets left out.
    public static func observations(counts: [UInt64], bounds: [Double], sum: Double) -> [(value: Double, count: UInt64)] {
        precondition(counts.count == bounds.count + 1)
        let finite = bounds.indices.filter { counts[$0] > 0 }
        let over = counts[bounds.count]
        let lo: (Int) -> Double = { $0 == 0 ? 0 : bounds[$0 - 1] }
        var out: [(Double, UInt64)] = []
        var finiteTotal = 0.0
        if !finite.isEmpty {
            var low = 0.0, high = 0.0
            for i in finite {
                low += Double(counts[i]) * lo(i)
                high += Double(counts[i]) * bounds[i]
            }
            // The share of each bucket's width to use: what makes the total match the sum, leaving
            // what lies above the last bound to the overflow bucket.
            let target = over > 0 ? min(sum - Double(over) * (bounds.last ?? 0), high) : sum
            var t = high > low ? (target - low) / (high - low) : 1
            t = min(1, max(1e-6, t))
            for i in finite {
                let v = lo(i) + t * (bounds[i] - lo(i))
                out.append((v, counts[i]))
                finiteTotal += Double(counts[i]) * v
            }
        }
        if over > 0 {
            let last = bounds.last ?? 0
            let v = max((sum - finiteTotal) / Double(over), last * (1 + 1e-9) + 1e-12)
            out.append((v, over))
        }
        return out
    }
}
