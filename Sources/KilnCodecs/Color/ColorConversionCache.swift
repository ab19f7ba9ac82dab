#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What converting pixels of one profile and layout to sRGB takes, decided once per profile.
enum ColorConversion {
    /// Nothing: the profile already is sRGB, or it is unusable (corrupt, wrong colour space).
    case identity
    case transform(ColorTransform)
    case grayTable(GrayToneTable)
}

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
    private var entries: [(key: Key, value: ColorConversion)] = []
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// The cached conversion, marked most recently used; nil on a miss.
    func value(for key: Key) -> ColorConversion? {
        locked {
            guard let index = entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = entries.remove(at: index)
            entries.append(entry)
            return entry.value
        }
    }

    /// Stores `value`, evicting the least recently used entry when full.
    func insert(_ value: ColorConversion, for key: Key) {
        locked {
            entries.removeAll { $0.key == key }
            if entries.count >= capacity { entries.removeFirst(entries.count - capacity + 1) }
            entries.append((key, value))
        }
    }

    /// Number of entries (tests).
    var count: Int { locked { entries.count } }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
