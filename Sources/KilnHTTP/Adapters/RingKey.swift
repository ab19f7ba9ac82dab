import KilnModel

/// What a ring of Kiln hosts (`nginx/kiln-hosts.conf`'s `hash`, `haproxy/kiln-hosts.cfg`'s
/// `balance hash`) must hash besides the path: the query parameters the adapters read. Without
/// them every Next.js URL (`/_next/image?url=…`) and every imgix variant of a source hashed to one
/// host. Derived from the adapters' declarations (`AdapterParameter`): parameters that change
/// nothing (`ixlib`) and cache-busters the adapters never read (`v=2`) stay out, so they do not
/// scatter one variant over the fleet. `RingKeyTests` checks both shipped files against it.
public enum RingKey {
    /// The query-string adapters' parameters that change the answer, sorted.
    public static var queryParameters: [String] {
        let tables = [NextImageAdapter.parameters, ImgixAdapter.parameters]
        let names = tables.flatMap { $0 }.filter { $0.refusal == nil && !$0.options.isEmpty }.flatMap(\.names)
        return Array(Set(names)).sorted()
    }

    /// The parameters nginx can name as `$arg_<name>`: letters, digits and `_` only. imgix's
    /// `fp-x`, `mark-alpha`, `trim-md` … cannot be spelt so (`$arg_fp-x` is `$arg_fp` then `-x`);
    /// each modifies a parameter that is hashed (`crop`, `mark`, `trim`), so leaving them out
    /// only sends their variants to that parameter's host: still one host per variant.
    public static var nginxQueryParameters: [String] {
        queryParameters.filter { $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") } }
    }

    /// What nginx adds to the variant (`$kiln_variant`) for a URL with a query string: each
    /// parameter's `$arg_` (the `default` of the `$kiln_adapter_args` map).
    public static var nginx: String {
        "\"" + nginxQueryParameters.map { "|$arg_\($0)" }.joined() + "\""
    }

    /// HAProxy's `set-var-fmt` of the key: the variant and each parameter's `url_param`.
    public static var haproxy: String {
        "\"%[var(txn.kiln_variant)]" + queryParameters.map { "|%[url_param(\($0))]" }.joined() + "\""
    }
}
