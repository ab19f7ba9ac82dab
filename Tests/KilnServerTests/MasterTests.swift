import Glibc
import Testing
import KilnPipeline
import KilnOrigins
@testable import KilnHTTP
@testable import KilnFastCGI
@testable import KilnServer

@Suite struct MasterTests {
    // waitpid statuses as the kernel encodes them.
    static func exited(_ code: Int32) -> Int32 { code << 8 }

    @Test func crashesAreFailuresAndFatalSignalsNotStopsOrRecycling() {
        #expect(!Master.isCrash(Self.exited(0)))          // recycling, stop
        #expect(Master.isCrash(Self.exited(1)))
        #expect(Master.isCrash(Self.exited(2)))           // rejected the configuration
        #expect(Master.isCrash(SIGSEGV))
        #expect(Master.isCrash(SIGABRT))
        #expect(Master.isCrash(SIGKILL))                  // the OOM killer
        #expect(!Master.isCrash(SIGTERM))                 // stopped before its handler was installed
        #expect(!Master.isCrash(SIGINT))
    }

    @Test func statusDescriptions() {
        #expect(Master.describe(status: Self.exited(0)) == "exited with status 0")
        #expect(Master.describe(status: Self.exited(2)) == "exited with status 2")
        #expect(Master.describe(status: SIGKILL) == "was killed by SIGKILL")
        #expect(Master.describe(status: SIGSEGV | 0x80) == "was killed by SIGSEGV (core dumped)")
        #expect(Master.format(1.26) == "1.3")
    }
}
