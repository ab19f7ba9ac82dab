import Glibc
import KilnModel
import KilnPOSIX

/// A source file opened by `FileSource.open`: the descriptor, the identity `fstat` gave, and the
/// size limit checked before reading. Closed on deinit.
final class OpenedFile: OpenedSource {
    let fd: Int32
    let path: String
    let identity: SourceIdentity
    let maxFileBytes: Int

    init(fd: Int32, path: String, identity: SourceIdentity, maxFileBytes: Int) {
        self.fd = fd
        self.path = path
        self.identity = identity
        self.maxFileBytes = maxFileBytes
    }

    /// The whole file, from offset 0 (a second call reads it again).
    func readAll() throws(LoadError) -> [UInt8] {
        guard identity.size <= maxFileBytes else {
            throw .tooLarge("source is \(identity.size) bytes, over the limit of \(maxFileBytes)")
        }
        // Read straight into the array's uninitialized storage (no pass zeroing megabytes first).
        var failure: SystemError?
        let data = [UInt8](unsafeUninitializedCapacity: identity.size) { buffer, initialized in
            do throws(SystemError) {
                initialized = try FileDescriptorIO.readFully(fd, into: UnsafeMutableRawBufferPointer(buffer), offset: 0)
            } catch {
                failure = error
                initialized = 0
            }
        }
        if let failure { throw .io("cannot read \(path): \(Errno.text(failure.code))") }
        return data
    }

    deinit { close(fd) }
}
