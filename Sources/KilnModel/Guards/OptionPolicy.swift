/// An option a client wrote that the deployment does not accept (`security.presets_only`,
/// `security.allowed_operations`): a 403.
public enum PolicyError: Error, Equatable, Sendable {
    case notAllowed(segment: String, reason: String)

    public var message: String {
        switch self {
        case let .notAllowed(segment, reason): "option '\(segment)' not allowed: \(reason)"
        }
    }
}

/// What options a client may write in a URL, for public deployments:
/// - `presetsOnly`: only `pr:`/`preset:` chains, plus the `presetsOnlyAllow` entries (`dpr` allows
///   `dpr:` with any argument, `f:auto` exactly `f:auto`, aliases and long names alike);
/// - `allowedOperations`: when not empty, only options that add one of these operations
///   (`resize` covers `rs`, `w` and `h`; request-wide options such as `q` or `g` add none).
///
/// Only what the client wrote is checked, before presets expand: presets are the operator's, and
/// so are nginx's trusted rewrites (which skip the policy). `exp:` is always allowed: it only
/// restricts (`OptionDeclaration.access`).
public struct OptionPolicy: Sendable, Equatable {
    public struct Entry: Sendable, Equatable {
        /// Canonical option name (`format` for `f`).
        public var option: String
        /// The exact arguments (`auto`), nil for any.
        public var arguments: String?
    }

    public var presetsOnly: Bool
    public var presetsOnlyAllow: [Entry]
    /// Operation names (`resize`, `blur`, a custom processor's name); empty: every operation.
    public var allowedOperations: Set<String>

    /// - Parameters:
    ///   - presetsOnlyAllow: entries such as `f`, `f:auto`, `dpr:`, `quality`.
    ///   - allowedOperations: names such as `resize`, `rs`, `crop` (aliases become the operation).
    public init(presetsOnly: Bool = false, presetsOnlyAllow: [String] = [], allowedOperations: [String] = []) {
        self.presetsOnly = presetsOnly
        self.presetsOnlyAllow = presetsOnlyAllow.map { text in
            let name = String(text.prefix { $0 != ":" })
            let rest = text.dropFirst(name.count).dropFirst()
            return Entry(option: SpecParser.canonicalOptionName(name), arguments: rest.isEmpty ? nil : String(rest))
        }
        self.allowedOperations = Set(allowedOperations.map { SpecParser.operationName($0) ?? $0 })
    }

    /// Nothing to check.
    public var isOpen: Bool { !presetsOnly && allowedOperations.isEmpty }

    /// Checks one option segment (already percent-decoded) that the client wrote.
    public func check(segment: String) throws(PolicyError) {
        let name = String(segment.prefix { $0 != ":" })
        let arguments = segment.count > name.count ? String(segment.dropFirst(name.count + 1)) : nil
        let declared = OptionCatalog.declaration(named: name)
        // Options that only restrict the answer (`exp:`) are always accepted.
        if declared?.access == .always { return }
        let option = declared?.name ?? name
        if presetsOnly, option != "preset" {
            let allowed = presetsOnlyAllow.contains { $0.option == option && ($0.arguments == nil || $0.arguments == arguments) }
            guard allowed else {
                let list = presetsOnlyAllow.map { $0.option + ($0.arguments.map { ":" + $0 } ?? "") }
                let also = list.isEmpty ? "" : " and " + list.joined(separator: ", ")
                throw .notAllowed(segment: segment, reason: "only presets (pr:<name>)\(also) are accepted")
            }
        }
        if !allowedOperations.isEmpty, let operation = SpecParser.operationName(name), !allowedOperations.contains(operation) {
            throw .notAllowed(segment: segment, reason: "operation '\(operation)' is not allowed here")
        }
    }
}

extension SpecParser {
    /// Checks every option the client wrote in `path` against `policy`, walking the segments as
    /// `parse` does (the same option/path boundary, the same decoding), before any preset expands.
    /// Errors other than the policy's are left to `parse`, which meets them at the same segment.
    public func check(_ policy: OptionPolicy, path rawPath: String, isDecoded: Bool) throws(PolicyError) {
        guard !policy.isOpen else { return }
        var path = Substring(rawPath)
        if !isDecoded, let q = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<q] }
        // Split on scalars, not Characters: a `/` followed by a combining mark is one Character.
        let segments = path.unicodeScalars.split(separator: "/", omittingEmptySubsequences: false).map { Substring($0) }
            .dropFirst(path.unicodeScalars.first == "/" ? 1 : 0)
        var builder = RequestBuilder()
        for raw in segments {
            if raw == "-" { return }
            guard let segment = isDecoded ? String(raw) : try? PathDecoding.decodeSegment(raw) else { return }
            let isOption: Bool
            do {
                isOption = try parseOption(segment, into: &builder, presetDepth: 0)
            } catch {
                // A bad option: still refuse it by name first (403 before 400), then stop; `parse` throws here.
                try policy.check(segment: segment)
                return
            }
            guard isOption else { return }
            try policy.check(segment: segment)
        }
    }
}
