import Glibc
import KilnPOSIX
import Testing

@Suite struct ErrnoTests {
    @Test func textIsStrerror() {
        #expect(Errno.text(ENOENT) == "No such file or directory")
        #expect(Errno.text(EACCES) == "Permission denied")
        #expect(Errno.text(99_999).hasPrefix("Unknown error"))
    }

    @Test func systemErrorDescribesOperationAndErrno() {
        #expect(SystemError("cannot open /x", code: ENOENT).description == "cannot open /x: No such file or directory")
    }
}

@Suite struct ClockAndSleepTests {
    @Test func sleepLastsAtLeastItsTimeOnTheMonotonicClock() {
        let start = MonotonicClock.nanoseconds()
        Sleep.milliseconds(20)
        let elapsed = MonotonicClock.nanoseconds() - start
        #expect(elapsed >= 20_000_000)
        Sleep.seconds(0)
        Sleep.milliseconds(-5)   // nothing
    }

    @Test func wallClockUnitsAgree() {
        let ms = WallClock.milliseconds()
        let ns = WallClock.nanoseconds()
        let s = WallClock.seconds()
        #expect(ms > 1_700_000_000_000)                    // after November 2023
        #expect(abs(ns / 1_000_000 - ms) < 1000)
        #expect(abs(s * 1000 - ms) < 2000)
    }

    @Test func monotonicSecondsAndNanosecondsAgree() {
        let s = MonotonicClock.seconds()
        let ns = MonotonicClock.nanoseconds()
        #expect(abs(Double(ns) / 1e9 - s) < 1)
    }
}
