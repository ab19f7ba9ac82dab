import Glibc

/// Blocking sleeps that last their whole time: `nanosleep` returns early on a signal (even with
/// SA_RESTART), so the remainder is slept again.
public enum Sleep {
    public static func nanoseconds(_ ns: UInt64) {
        var request = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        var remainder = timespec()
        while nanosleep(&request, &remainder) != 0 && errno == EINTR { request = remainder }
    }

    public static func milliseconds(_ ms: Int) {
        nanoseconds(UInt64(max(ms, 0)) * 1_000_000)
    }

    public static func seconds(_ s: Double) {
        guard s > 0 else { return }
        nanoseconds(UInt64(s * 1e9))
    }
}
