import KilnHTTP
import KilnModel

/// The line the master logs at start and after each reload about URL signing: whether it is on,
/// how many keys (never the keys), the signature size and what unsigned URLs get. An operator
/// reading the log knows which URLs the running generation accepts.
enum SigningSummary {
    static func line(_ values: ConfigValues) -> String {
        let signature: URLSignature
        do {
            var security = try SecurityConfiguration(values)
            try security.resolve(origin: values.origin)
            signature = security.urlSignature
        } catch {
            return "URL signing: the security settings do not load (\(error))"
        }
        return line(signature)
    }

    static func line(_ signature: URLSignature) -> String {
        guard !signature.keys.isEmpty else {
            return signature.allowUnsigned
                ? "URL signing off: every URL is served unsigned (set security.keys and security.salts to sign; docs/security.md)"
                : "URL signing off and unsigned URLs refused: only trusted rewrites and adapters are answered"
        }
        let unsigned = signature.allowUnsigned ? "unsigned URLs allowed under /unsafe/" : "unsigned URLs refused"
        return "URL signing on: \(signature.keys.count) key\(signature.keys.count == 1 ? "" : "s"), "
            + "\(signature.size)-byte signatures, \(unsigned)"
    }
}
