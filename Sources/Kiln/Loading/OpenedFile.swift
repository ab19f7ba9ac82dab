import Glibc
import KilnCore
import KilnSystem

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
        var data = [UInt8](repeating: 0, count: identity.size)
        let read = data.withUnsafeMutableBytes { raw in
            Result { () throws(SystemError) in try FileDescriptorIO.readFully(fd, into: raw, offset: 0) }
        }
        switch read {
        case .success(let filled): if filled < data.count { data.removeSubrange(filled...) }
        case .failure(let error): throw .io("cannot read \(path): \(Errno.text(error.code))")
        }
        return data
    }

    deinit { close(fd) }
}
