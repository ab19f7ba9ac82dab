import ArgumentParser
import KilnConfigFile
import KilnHTTP
import KilnModel
import KilnOrigins
import KilnPipeline
import KilnPOSIX
import KilnServer

/// `kiln srcset photos/cat.jpg --widths 320,640,960,1280 [--preset card] [--sign]`: an `<img>` tag
/// (or JSON) whose `srcset` lists one native Kiln URL per width, checked by the parser of the same
/// settings `kiln serve` reads, and signed with its first key when asked.
struct SrcsetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "srcset",
        abstract: "Print an <img> tag (or JSON) with src, srcset and sizes: kiln srcset photos/cat.jpg --widths 320,640,960",
        discussion: """
        Each width gives the URL /[<signature>/][exp:<time>/][pr:<preset>/]w:<width>/[<options>/]<path>, the path's \
        segments percent-encoded (every byte but A-Z a-z 0-9 - . _ ~), with a '-' segment before the path \
        when its first segment could be read as an option (it holds a ':' or is a bare name such as 'photos'). Every URL is parsed with the configured \
        presets and limits first (a bad one exits 2 naming it). src is the widest URL. --sign signs each \
        URL with the first pair of security.keys / security.salts (as kiln sign). Attribute values are \
        HTML-escaped.
        """)

    @Argument(help: "The source path, relative to the root (e.g. photos/cat.jpg), not percent-encoded.")
    var path: String

    @Option(help: ArgumentHelp("Comma-separated widths in pixels (e.g. 320,640,960,1280).", valueName: "list"))
    var widths: String

    @Option(help: ArgumentHelp("A configured preset to apply (pr:<name>, before the width).", valueName: "name"))
    var preset: String?

    @Option(name: .customLong("options"), help: ArgumentHelp("More options after the width, '/'-separated (e.g. q:70/f:auto).", valueName: "options"))
    var extraOptions: String?

    @Option(help: ArgumentHelp("The sizes attribute.", valueName: "sizes"))
    var sizes: String = "100vw"

    @Option(help: ArgumentHelp("The alt attribute.", valueName: "text"))
    var alt: String = ""

    @Option(name: .customLong("base-url"), help: ArgumentHelp("Put before every path (e.g. https://img.example.com); default: root-relative URLs.", valueName: "url"))
    var baseURL: String = ""

    @Flag(help: "Sign every URL with the configured key (as kiln sign).")
    var sign = false

    @Option(help: ArgumentHelp("With --sign: an expiry, a duration from now (30s, 10m, 1h, 7d) or a unix time.", valueName: "when"))
    var expires: String?

    @Flag(help: "Print JSON ({\"src\", \"srcset\", \"sizes\", \"alt\", \"urls\": [{\"width\", \"url\"}]}) instead of the tag.")
    var json = false

    @OptionGroup var options: SettingsOptions

    func run() throws {
        guard let list = SrcsetCommand.widthList(widths) else {
            Diagnostics.fail("--widths: expected comma-separated positive whole numbers, got '\(widths)'")
            throw ExitCode(2)
        }
        guard expires == nil || sign else {
            Diagnostics.fail("--expires needs --sign (an unsigned expiry can be removed by anyone)")
            throw ExitCode(2)
        }
        let configuration = try SignCommand.configuration(options)
        let signature = sign ? try SignCommand.signature(configuration) : nil
        let parser: SpecParser
        do {
            parser = try configuration.pipeline(processors: BuildProcessors.registry).parser
        } catch {
            Diagnostics.fail("invalid configuration: \(error)")
            throw ExitCode(2)
        }
        var prefix: [String] = []
        if let expires {
            guard let t = SignCommand.expiry(expires, now: WallClock.seconds()) else {
                Diagnostics.fail("--expires: expected a duration such as 30s, 10m, 1h, 7d or a unix time, got '\(expires)'")
                throw ExitCode(2)
            }
            prefix.append("exp:\(t)")
        }
        if let preset { prefix.append("pr:\(preset)") }
        let extra = (extraOptions ?? "").split(separator: "/").map(String.init)
        let source = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !source.isEmpty else {
            Diagnostics.fail("the source path is empty")
            throw ExitCode(2)
        }
        let base = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL

        var urls: [(width: Int, url: String)] = []
        for w in list {
            let options = prefix + ["w:\(w)"] + extra
            let unsigned: String
            do {
                unsigned = try SrcsetCommand.path(options: options, source: source, parser: parser)
            } catch {
                Diagnostics.fail("not a valid image path for width \(w): \(PipelineFailure(error).message)")
                throw ExitCode(2)
            }
            var url = unsigned
            if let signature {
                guard let signed = signature.sign(unsigned) else { throw ExitCode(2) }
                url = signed
            }
            urls.append((width: w, url: base + url))
        }
        let src = urls[urls.count - 1].url
        let srcset = urls.map { "\($0.url) \($0.width)w" }.joined(separator: ", ")
        if json {
            let entries = urls.map { "{\"width\": \($0.width), \"url\": \(Output.jsonString($0.url))}" }
            Output.line("{\"src\": \(Output.jsonString(src)), \"srcset\": \(Output.jsonString(srcset)), "
                        + "\"sizes\": \(Output.jsonString(sizes)), \"alt\": \(Output.jsonString(alt)), "
                        + "\"urls\": [\(entries.joined(separator: ", "))]}")
        } else {
            let e = SrcsetCommand.htmlEscaped
            Output.line("<img src=\"\(e(src))\" srcset=\"\(e(srcset))\" sizes=\"\(e(sizes))\" alt=\"\(e(alt))\">")
        }
    }

    /// `/<options>/[-/]<encoded source>`, checked by the parser. The `-` goes before the source
    /// when its first segment could ever be read as an option: it holds a `:`, is `-`, or is a bare
    /// name (letters, digits and `_`, starting with a letter: a flag such as `circle`, or a custom
    /// processor an operator may add later). integrations/kiln-url.mjs has the same rule.
    static func path(options: [String], source: [String], parser: SpecParser) throws -> String {
        let marker = needsMarker(source[0]) ? ["-"] : []
        let path = (options + marker + source.map(percentEncoded)).map { "/" + $0 }.joined()
        let request = try parser.parse(path)
        guard request.sourcePath == source.joined(separator: "/") else {
            throw SpecError.malformedPath(reason: "the source path does not survive parsing: \(source.joined(separator: "/"))")
        }
        return path
    }

    static func needsMarker(_ first: String) -> Bool {
        if first == "-" || first.contains(":") { return true }
        guard let head = first.first, head.isLetter else { return false }
        return first.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// `320,640` → [320, 640], sorted and without repeats; nil for anything else.
    static func widthList(_ text: String) -> [Int]? {
        var out: [Int] = []
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let t = part.trimmingSpaces()
            guard !t.isEmpty, t.allSatisfy({ $0.isASCII && $0.isNumber }), let n = Int(t), n > 0 else { return nil }
            out.append(n)
        }
        let sorted = Array(Set(out)).sorted()
        return sorted.isEmpty ? nil : sorted
    }

    /// Every byte of the UTF-8 but RFC 3986's unreserved characters as `%XX` (as the loaders in
    /// integrations/kiln-url.mjs write them).
    static func percentEncoded(_ segment: String) -> String {
        PercentEncoding.encode(segment, keeping: .unreserved)
    }

    /// The text for a double-quoted HTML attribute.
    static func htmlEscaped(_ s: String) -> String {
        var out = ""
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }
}

private extension Substring {
    func trimmingSpaces() -> Substring {
        var s = self
        while s.first == " " { s = s.dropFirst() }
        while s.last == " " { s = s.dropLast() }
        return s
    }
}
