import Glibc
import Testing
@testable import KilnPOSIX

/// `ProcessMemory`: the resident set from /proc, and giving back the executable's start-up pages.
@Suite struct ProcessMemoryTests {
    @Test func theExecutableIsFoundAndItsMappingsAdvised() throws {
        let exe = try #require(ProcessMemory.executablePath())
        #expect(exe.hasPrefix("/") && access(exe, X_OK) == 0)
        let before = try #require(ProcessMemory.residentBytes())
        #expect(before > 0)
        // The test binary's own code and read-only data: several MB, all advised.
        let advised = ProcessMemory.releaseExecutablePages()
        #expect(advised > 1 << 20, "advised \(advised) bytes")
        // The process goes on (what it runs faults back in) and still reads its resident set.
        let after = try #require(ProcessMemory.residentBytes())
        #expect(after > 0)
        #expect(String(describing: [3, 1, 2].sorted()) == "[1, 2, 3]")
    }
}
