import KilnModel

/// The `capacity` least recently used entries seen so far, for a sweep that cannot hold every
/// entry of a large cache in memory: a max-heap on the access time, so each entry of the scan costs
/// one comparison with the newest kept, and a heap step (O(log capacity)) when it is older.
///
/// Memory is `capacity × MemoryLayout<Candidate>.stride` (48 bytes): 4.8 MB for the 100 000
/// evictions of a large sweep, whatever the number of entries (a million entries as `String`
/// paths took about 130 MB).
struct OldestEntries {
    struct Candidate {
        /// Last recorded access (mtime), nanoseconds.
        var mtime: Int64
        /// Disk usage.
        var size: Int
        /// The entry's name, 64 hex digits, as 32 bytes; its folder is the first byte.
        var name: EntryName
    }

    let capacity: Int
    private(set) var heap: [Candidate] = []

    init(capacity: Int) {
        self.capacity = max(0, capacity)
        heap.reserveCapacity(min(self.capacity, 1 << 16))
    }

    var count: Int { heap.count }

    /// Whether an entry last used at `mtime` would be kept (check before building its candidate).
    func wouldKeep(mtime: Int64) -> Bool {
        heap.count < capacity || (heap.first.map { mtime < $0.mtime } ?? false)
    }

    /// Keeps `c` when fewer than `capacity` are kept or when it is older than the newest kept
    /// (which it then replaces).
    mutating func offer(_ c: Candidate) {
        if heap.count < capacity {
            heap.append(c)
            siftUp(heap.count - 1)
        } else if let top = heap.first, c.mtime < top.mtime {
            heap[0] = c
            siftDown(0)
        }
    }

    /// The kept entries, oldest first.
    func sortedOldestFirst() -> [Candidate] {
        heap.sorted { $0.mtime < $1.mtime }
    }

    private mutating func siftUp(_ start: Int) {
        var i = start
        while i > 0 {
            let parent = (i - 1) / 2
            guard heap[parent].mtime < heap[i].mtime else { return }
            heap.swapAt(parent, i)
            i = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var largest = i
            if l < heap.count && heap[l].mtime > heap[largest].mtime { largest = l }
            if r < heap.count && heap[r].mtime > heap[largest].mtime { largest = r }
            guard largest != i else { return }
            heap.swapAt(i, largest)
            i = largest
        }
    }
}

/// An entry file's name (64 lowercase hex digits) in 32 bytes.
struct EntryName: Equatable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    /// Nil unless `name` is 64 lowercase hex digits.
    init?(_ name: String) {
        var w = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        var n = 0
        for c in name.utf8 {
            let v: UInt64
            switch c {
            case 0x30...0x39: v = UInt64(c - 0x30)
            case 0x61...0x66: v = UInt64(c - 0x61 + 10)
            default: return nil
            }
            switch n / 16 {
            case 0: w.0 = w.0 << 4 | v
            case 1: w.1 = w.1 << 4 | v
            case 2: w.2 = w.2 << 4 | v
            case 3: w.3 = w.3 << 4 | v
            default: return nil
            }
            n += 1
        }
        guard n == 64 else { return nil }
        words = w
    }

    static func == (a: EntryName, b: EntryName) -> Bool {
        a.words == b.words
    }

    /// The 64 hex digits.
    var hex: String {
        Hex.lowercase(words: [words.0, words.1, words.2, words.3])
    }

    /// The fan-out folder: the first two hex digits.
    var folder: String { String(hex.prefix(2)) }
}
