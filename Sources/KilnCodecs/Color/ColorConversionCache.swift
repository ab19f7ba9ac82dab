import Synchronization

/// What converting pixels of one profile and layout to sRGB takes, decided once per profile.
enum ColorConversion {
    /// Nothing: the profile already is sRGB, or it is unusable (corrupt, wrong colour space).
    case identity
    case transform(ColorTransform)
    case grayTable(GrayToneTable)
}

/// Shared across threads by the cache: a transform is immutable once made and lcms2 keeps no
/// per-call state in it (see `ColorTransform`); a tone table is a value.
extension ColorConversion: @unchecked Sendable {}

/// A small least-recently-used cache of `ColorConversion`s, keyed by the SHA-256 of the profile
/// bytes and the pixel layout.
///
/// Building an lcms2 transform costs milliseconds (see `SRGBConverter`); a worker process sees
/// the same few profiles (Adobe RGB, Display P3, a camera's, a print shop's CMYK) again and
/// again. Entries are reference-counted, so one evicted while in use stays valid for its user.
/// A mutex guards the table only (never a transform being built or applied): workers are
/// single-threaded, but tests share one converter across threads.
final class ColorConversionCache: @unchecked Sendable {
    struct Key: Hashable {
        var digest: String
        var layout: ColorLayout
    }

    let capacity: Int
    /// Most recently used last. A handful of entries: a linear scan beats any bookkeeping.
    private let entries = Mutex<[(key: Key, value: ColorConversion)]>([])

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
    }

    /// The cached conversion, marked most recently used; nil on a miss.
    func value(for key: Key) -> ColorConversion? {
        entries.withLock { entries in
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: index)
            entries.append(entry)
            return entry.value
        }
    }

    /// Stores `value`, evicting the least recently used entry when full.
    func insert(_ value: ColorConversion, for key: Key) {
        let capacity = self.capacity
        entries.withLock { entries in
            entries.removeAll { $0.key == key }
            if entries.count >= capacity { entries.removeFirst(entries.count - capacity + 1) }
            entries.append((key, value))
        }
    }

    /// Number of entries (tests).
    var count: Int { entries.withLock { $0.count } }
}
