/// Options about the request rather than the pixels: presets, expiry, the cache buster and the
/// download name.
extension OptionCatalog {
    static let request: [OptionDeclaration] = [
        OptionDeclaration(
            "preset", aliases: ["pr"], identity: .resolved,
            usages: [.init("preset:<name>[:<name>…]", "the option chain configured in `[presets]`, expanded in place", ["/pr:avatar/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try c.parser.expandPresets(a.args, segment: c.segment, into: &b, presetDepth: c.presetDepth)
        },
        OptionDeclaration(
            "expires", aliases: ["exp"], identity: .restriction, access: .always,
            usages: [.init("expires:<unix time>",
                           "refuse the URL (410) after this time; covered by the signature (see [Signed URLs](security.md#signed-urls)), not part of the cache key",
                           ["/exp:1767225600/w:300/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            try a.arity(1...1)
            guard c.presetDepth == 0 else { throw a.invalid("an expiry belongs in the URL, not in a preset") }
            guard b.expires == nil else { throw a.invalid("given twice") }
            // Decimal digits only (unix seconds need 10; at most 12, year 33658).
            let digits = a[0].utf8
            guard (1...12).contains(digits.count), digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let t = Int64(a[0]) else { throw a.invalid("must be a unix time in seconds") }
            b.expires = t
        },
        OptionDeclaration(
            "cachebuster", aliases: ["cb"],
            usages: [.init("cachebuster:<version>",
                           "a version for the URL (1–64 letters, digits, `.`, `_`, `-`, `~`): changes nothing in the image but is "
                               + "part of the cache key, so a new version is a new URL every cache fetches anew, and answers to it are "
                               + "`immutable` (`http.immutable`, see [CDN origin](deploy.md#use-it-as-a-cdn-origin))",
                           ["/cb:2026-11/w:300/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            guard b.version == nil else { throw a.invalid("given twice") }
            let token = a[0].utf8
            guard (1...64).contains(token.count), token.allSatisfy({ c in
                (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z"))
                    || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: ".") || c == UInt8(ascii: "_")
                    || c == UInt8(ascii: "-") || c == UInt8(ascii: "~")
            }) else { throw a.invalid("must be 1 to 64 letters, digits, '.', '_', '-' or '~'") }
            b.version = a[0]
        },
        OptionDeclaration(
            "filename", aliases: ["fn"], identity: .headers,
            usages: [.init("filename:<name>",
                           "the file name of `Content-Disposition` (see [Download names](#download-names)): the rest of the segment, percent-decoded, colons included; its extension is replaced by the output's. Not part of the cache key",
                           ["/fn:Holiday%202024/w:800/cat.jpg"])]
        ) { (a, b, c) throws(SpecError) in
            // Everything after the first colon, colons included: the name is free text.
            let name = String(c.segment.dropFirst(c.name.count + 1))
            guard !name.isEmpty else { throw a.invalid("missing file name") }
            guard name.utf8.count <= DownloadOptions.maxFilenameBytes else {
                throw a.invalid("file name longer than \(DownloadOptions.maxFilenameBytes) bytes")
            }
            b.download.filename = name
        },
        OptionDeclaration(
            "attachment", aliases: ["att"], identity: .headers,
            usages: [.init("attachment:<0\\|1>",
                           "`Content-Disposition: attachment` (the browser downloads) instead of `inline`. Not part of the cache key",
                           ["/att:1/w:800/cat.jpg"])]
        ) { (a, b, _) throws(SpecError) in
            try a.arity(1...1)
            b.download.attachment = try a.flag(0, "attachment")
        },
    ]
}
