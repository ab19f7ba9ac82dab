import Glibc

extension MagicSniffer {
    /// libmagic could not be opened or could not load its database (the default one, or the file
    /// named by the `MAGIC` environment variable).
    public struct DatabaseError: Error, CustomStringConvertible, Sendable {
        public let reason: String
        /// The `MAGIC` environment variable when set: the usual cause of a bad database.
        public let magicVariable: String?

        init(reason: String) {
            self.reason = reason
            magicVariable = getenv("MAGIC").map { String(cString: $0) }
        }

        public var description: String {
            let from = magicVariable.map { " (MAGIC=\($0))" } ?? ""
            return "cannot load the libmagic database\(from): \(reason)"
        }
    }
}
