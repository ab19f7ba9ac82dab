import Glibc

/// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) for `Last-Modified` and `If-Modified-Since`.
public enum HTTPDate {
    public static func format(secondsSinceEpoch: Int64) -> String {
        var t = time_t(secondsSinceEpoch)
        var tm = tm()
        gmtime_r(&t, &tm)
        var buffer = [CChar](repeating: 0, count: 64)
        let n = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &tm)
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Seconds since the epoch, nil for anything that is not an IMF-fixdate.
    public static func parse(_ text: String) -> Int64? {
        // "Sun, 06 Nov 1994 08:49:37 GMT"
        let f = text.split(separator: " ")
        guard f.count == 6, f[0].hasSuffix(","), f[5] == "GMT",
              let day = Int(f[1]), let month = months.firstIndex(of: String(f[2])), let year = Int(f[3]) else { return nil }
        let hms = f[4].split(separator: ":").compactMap { Int($0) }
        guard hms.count == 3, (1...31).contains(day), (1970...9999).contains(year),
              (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2]) else { return nil }
        var tm = tm()
        tm.tm_year = Int32(year - 1900)
        tm.tm_mon = Int32(month)
        tm.tm_mday = Int32(day)
        tm.tm_hour = Int32(hms[0])
        tm.tm_min = Int32(hms[1])
        tm.tm_sec = Int32(hms[2])
        return Int64(timegm(&tm))
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}
