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
        #expect(!WaitStatus.isCrash(Self.exited(0)))          // recycling, stop
        #expect(WaitStatus.isCrash(Self.exited(1)))
        #expect(WaitStatus.isCrash(Self.exited(2)))           // rejected the configuration
        #expect(WaitStatus.isCrash(SIGSEGV))
        #expect(WaitStatus.isCrash(SIGABRT))
        #expect(WaitStatus.isCrash(SIGKILL))                  // the OOM killer
        #expect(!WaitStatus.isCrash(SIGTERM))                 // stopped before its handler was installed
        #expect(!WaitStatus.isCrash(SIGINT))
    }

    @Test func statusDescriptions() {
        #expect(WaitStatus.describe(Self.exited(0)) == "exited with status 0")
        #expect(WaitStatus.describe(Self.exited(2)) == "exited with status 2")
        #expect(WaitStatus.describe(SIGKILL) == "was killed by SIGKILL")
        #expect(WaitStatus.describe(SIGSEGV | 0x80) == "was killed by SIGSEGV (core dumped)")
        #expect(Supervisor.format(1.26) == "1.3")
    }
}
