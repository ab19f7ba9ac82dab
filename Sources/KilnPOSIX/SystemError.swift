import Glibc

/// A failed system call: what was being done, and the errno it failed with.
public struct SystemError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What failed, e.g. "cannot write /var/run/kiln.pid" or "read".
    public let operation: String
    public let code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// `operation: message` (`strerror` text).
    public var description: String { "\(operation): \(Errno.text(code))" }
}

/// The text of errno values.
public enum Errno {
    /// `strerror(code)`, e.g. "No such file or directory" for ENOENT (thread-safe `strerror_r`).
    public static func text(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        // The XSI strerror_r (Swift sees Glibc without _GNU_SOURCE): 0 and the text in `buffer`.
        let rc = buffer.withUnsafeMutableBufferPointer { strerror_r(code, $0.baseAddress!, $0.count) }
        guard rc == 0 else { return "Unknown error \(code)" }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// The calling thread's errno.
    public static var current: Int32 { errno }
}
