/// A UTC calendar date and time of day from a count since the epoch, without `gmtime` (no locale,
/// no time zone files; Howard Hinnant's `civil_from_days`): for log timestamps and AWS's
/// `x-amz-date`, which format it their own way.
public struct CivilTime: Sendable, Equatable {
    public var year: Int64
    /// 1...12
    public var month: Int64
    /// 1...31
    public var day: Int64
    public var hour: Int64
    public var minute: Int64
    public var second: Int64
    public var millisecond: Int64

    /// From milliseconds since the epoch (negative: before 1970).
    public init(millisecondsSinceEpoch ms: Int64) {
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let inDay = ms - days * 86_400_000
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * mp + 2) / 5 + 1
        month = mp < 10 ? mp + 3 : mp - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        hour = inDay / 3_600_000
        minute = inDay / 60_000 % 60
        second = inDay / 1000 % 60
        millisecond = inDay % 1000
    }

    /// `n` in decimal, zero-padded to `width` digits.
    public static func pad(_ n: Int64, _ width: Int) -> String {
        let s = String(n)
        return String(repeating: "0", count: max(0, width - s.count)) + s
    }
}
