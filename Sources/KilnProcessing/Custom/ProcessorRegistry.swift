import KilnModel

/// Custom processors by name: a build registers Swift `ImageProcessing` types, and their names
/// become URL options (`posterize:4`).
///
/// The parser asks `resolver` about every option name that is no built-in one; the resolver
/// builds the processor once from the arguments, so bad arguments are a 400 before anything is
/// read, and takes its `identifier` into the request (and so into the cache key). The pipeline
/// builds it again through `ProcessorFactory` when it runs. Built-in names always win: a custom
/// processor called `blur` is never reached.
public struct ProcessorRegistry: Sendable {
    /// Builds a processor from the option's arguments (the fields after the name); throws
    /// `ProcessingError.invalidArgument` for arguments it does not accept.
    public typealias Make = @Sendable ([String]) throws(ProcessingError) -> any ImageProcessing

    private var makers: [String: Make] = [:]

    public init() {}

    /// Registers `make` under `name` (letters, digits and `_`, starting with a letter); a second
    /// registration of a name replaces the first.
    public mutating func register(_ name: String, make: @escaping Make) {
        precondition(Self.isValidName(name), "a custom processor name is letters, digits and _, starting with a letter: \(name)")
        makers[name] = make
    }

    /// The registered names, sorted.
    public var names: [String] { makers.keys.sorted() }

    /// The processor for `name` with `arguments`; nil when no processor has that name.
    public func make(_ name: String, arguments: [String]) throws(ProcessingError) -> (any ImageProcessing)? {
        guard let make = makers[name] else { return nil }
        return try make(arguments)
    }

    /// The `SpecParser.CustomResolver` over these processors: nil for unknown names, a
    /// `SpecError.invalidOption` naming the segment (`name:args`) when the processor refuses the
    /// arguments, else the operation with the processor's identifier.
    public var resolver: SpecParser.CustomResolver {
        let registry = self
        return { (name: String, arguments: [String]) throws(SpecError) -> CustomOperation? in
            do throws(ProcessingError) {
                guard let processor = try registry.make(name, arguments: arguments) else { return nil }
                return CustomOperation(name: name, arguments: arguments, identifier: processor.identifier)
            } catch {
                let segment = ([name] + arguments).joined(separator: ":")
                switch error {
                case .invalidArgument(_, let reason): throw .invalidOption(segment: segment, reason: reason)
                case .overLimit(let reason): throw .invalidOption(segment: segment, reason: reason)
                }
            }
        }
    }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first.properties.isAlphabetic, first.isASCII else { return false }
        return name.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") }
    }
}
