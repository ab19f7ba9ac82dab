import KilnModel

/// A least-recently-used memory cache bounded by total cost (encoded bytes), entry count and age
/// (Nuke's `ImageCache`: `costLimit`, `countLimit`, `ttl`, `entryCostLimit`).
///
/// Every operation is O(1): a dictionary from key to a slot in an array, the slots chained in a
/// doubly linked list by index (most recent first). Not thread-safe: one per worker process.
public final class MemoryCache: ImageCaching {
    /// Most encoded bytes kept. 0 keeps nothing.
    public let costLimit: Int
    /// Most entries kept. 0 keeps nothing.
    public let countLimit: Int
    /// Seconds an entry lives after it was stored (hits do not extend it); 0 means no limit.
    public let ttl: Double
    /// Larger entries are not kept, so one huge result cannot flush the cache. Default a tenth of
    /// `costLimit`.
    public let entryCostLimit: Int

    public private(set) var totalCost = 0
    public var totalCount: Int { index.count }

    private struct Slot {
        var key: String
        var image: CachedImage?
        var cost: Int
        /// Monotonic nanoseconds; 0 never expires.
        var expires: UInt64
        var prev: Int
        var next: Int
    }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var index: [String: Int] = [:]
    /// Most recently used, or -1.
    private var head = -1
    /// Least recently used, or -1.
    private var tail = -1
    private let now: () -> UInt64

    /// - Parameter now: monotonic nanoseconds (injected by tests).
    public init(costLimit: Int = 64 << 20, countLimit: Int = 1000, ttl: Double = 600, entryCostLimit: Int? = nil,
                now: @escaping () -> UInt64 = Timeline.now) {
        self.costLimit = max(0, costLimit)
        self.countLimit = max(0, countLimit)
        self.ttl = max(0, ttl)
        self.entryCostLimit = entryCostLimit ?? self.costLimit / 10
        self.now = now
    }

    public convenience init(_ configuration: CacheConfiguration) {
        self.init(costLimit: configuration.memoryCostLimit, countLimit: configuration.memoryCountLimit, ttl: configuration.memoryTTL)
    }

    public subscript(key: CacheKey) -> CachedImage? {
        get { value(forKey: key.hex) }
        set {
            if let newValue { set(newValue, forKey: key.hex) } else { removeValue(forKey: key.hex) }
        }
    }

    /// The entry, made the most recently used; nil when missing or expired (then it is removed).
    public func value(forKey key: String) -> CachedImage? {
        guard let i = index[key] else { return nil }
        let expires = slots[i].expires
        if expires != 0 && now() >= expires {
            remove(i)
            return nil
        }
        if i != head {
            unlink(i)
            pushFront(i)
        }
        return slots[i].image
    }

    public func set(_ image: CachedImage, forKey key: String) {
        let cost = image.data.count
        guard cost <= entryCostLimit, cost <= costLimit, countLimit > 0 else {
            removeValue(forKey: key)
            return
        }
        let t = now()
        let expires: UInt64 = ttl > 0 ? t &+ UInt64(ttl * 1e9) : 0
        if let i = index[key] {
            totalCost += cost - slots[i].cost
            slots[i].image = image
            slots[i].cost = cost
            slots[i].expires = expires
            if i != head {
                unlink(i)
                pushFront(i)
            }
        } else {
            let slot = Slot(key: key, image: image, cost: cost, expires: expires, prev: -1, next: -1)
            let i: Int
            if let free = freeSlots.popLast() {
                slots[free] = slot
                i = free
            } else {
                slots.append(slot)
                i = slots.count - 1
            }
            index[key] = i
            totalCost += cost
            pushFront(i)
        }
        // Expired entries at the cold end go first; then the least recently used ones.
        while tail != -1 && tail != head && slots[tail].expires != 0 && t >= slots[tail].expires { remove(tail) }
        while totalCost > costLimit || index.count > countLimit { remove(tail) }
    }

    public func removeValue(forKey key: String) {
        if let i = index[key] { remove(i) }
    }

    public func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        index.removeAll()
        head = -1
        tail = -1
        totalCost = 0
    }

    /// Removes every entry whose image `matches` (a purged source: `RenderCoordinator`'s purge
    /// journal); how many. O(n).
    @discardableResult
    public func removeAll(where matches: (CachedImage) -> Bool) -> Int {
        let doomed = index.values.filter { slots[$0].image.map(matches) ?? false }
        for i in doomed { remove(i) }
        return doomed.count
    }

    /// Keys from the most to the least recently used (for tests and diagnostics; O(n)).
    public var keysByRecency: [String] {
        var out: [String] = []
        var i = head
        while i != -1 {
            out.append(slots[i].key)
            i = slots[i].next
        }
        return out
    }

    private func unlink(_ i: Int) {
        let p = slots[i].prev, n = slots[i].next
        if p != -1 { slots[p].next = n } else { head = n }
        if n != -1 { slots[n].prev = p } else { tail = p }
        slots[i].prev = -1
        slots[i].next = -1
    }

    private func pushFront(_ i: Int) {
        slots[i].prev = -1
        slots[i].next = head
        if head != -1 { slots[head].prev = i }
        head = i
        if tail == -1 { tail = i }
    }

    private func remove(_ i: Int) {
        unlink(i)
        index.removeValue(forKey: slots[i].key)
        totalCost -= slots[i].cost
        slots[i].image = nil
        slots[i].key = ""
        slots[i].cost = 0
        freeSlots.append(i)
    }
}
