import Glibc
import SystemPackage

/// A failed system call: what was being done, and the errno it failed with.
public struct SystemError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What failed, e.g. "cannot write /var/run/kiln.pid" or "read".
    public let operation: String
    public let code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    /// What swift-system threw (an `Errno`; anything else reads as EIO).
    public init(_ operation: String, _ error: any Error) {
        self.init(operation, code: (error as? SystemPackage.Errno)?.rawValue ?? EIO)
    }

    /// `operation: message` (`strerror` text).
    public var description: String { "\(operation): \(Errno.text(code))" }
}

/// The text of errno values (swift-system's `Errno`, which Kiln's own callers reach through
/// this name so that only KilnPOSIX imports SystemPackage).
public enum Errno {
    /// The system's text, e.g. "No such file or directory" for ENOENT.
    public static func text(_ code: Int32) -> String {
        SystemPackage.Errno(rawValue: code).description
    }

    /// The calling thread's errno: the one place outside KilnPOSIX's own calls where it is read
    /// or set (after a Glibc call made elsewhere).
    public static var current: Int32 {
        get { errno }
        set { errno = newValue }
    }
}
