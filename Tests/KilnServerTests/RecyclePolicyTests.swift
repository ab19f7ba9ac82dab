import Testing
@testable import KilnServer

/// The worker's side of recycling: when it leaves, and what it says.
@Suite struct RecyclePolicyTests {
    @Test func memoryIsCheckedAfterARequestAndOnlyWithALimit() {
        let policy = RecyclePolicy(maxRequests: 0, maxMemory: 48 << 20)
        #expect(!policy.checksMemory(afterRequests: 0), "before any request: the start-up size is not the worker's fault")
        #expect(policy.checksMemory(afterRequests: 1))
        #expect(!policy.isOverMemory(residentBytes: 48 << 20))
        #expect(policy.isOverMemory(residentBytes: (48 << 20) + 1))
        let none = RecyclePolicy(maxRequests: 0, maxMemory: 0)
        #expect(!none.checksMemory(afterRequests: 5) && !none.isOverMemory(residentBytes: 1 << 40))
    }

    @Test func theNoticesNameTheLimits() {
        let policy = RecyclePolicy(maxRequests: 500, maxMemory: 48 << 20)
        // 48.3 MiB over a 48 MiB limit reads 49, not "48 MiB is above 48 MiB".
        #expect(policy.memoryNotice(residentBytes: Int(48.3 * 1048576), requests: 3)
            == "resident memory 49 MiB is above limits.max_worker_memory (48 MiB) after 3 requests; exiting to be replaced")
        #expect(policy.countNotice == "served max_requests = 500; exiting to be replaced")
    }
}
