import Foundation
import KilnModel
import Testing
@testable import KilnHTTP

/// The adapters' parameter tables (`AdapterParameter`) against the option declarations
/// (`OptionCatalog`), the adapters' translations and docs/integrations.md.
@Suite struct AdapterDeclarationTests {
    static let tables: [(adapter: String, file: String, section: String, parameters: [AdapterParameter])] = [
        ("nextjs", "docs/integrations.md", "### Next.js", NextImageAdapter.parameters),
        ("cloudflare", "docs/integrations.md", "### Cloudflare", CloudflareAdapter.parameters),
        ("imgix", "docs/integrations.md", "### imgix", ImgixAdapter.parameters),
        ("imgproxy", "docs/migrate-imgproxy.md", "## Options", ImgproxyAdapter.parameters),
        ("thumbor", "docs/integrations.md", "### thumbor", ThumborAdapter.parameters),
    ]

    @Test func everyMappedOptionIsDeclared() {
        for (adapter, _, _, parameters) in Self.tables {
            for p in parameters {
                for option in p.options {
                    #expect(OptionCatalog.declaration(named: option)?.name == option,
                            "\(adapter) \(p.name) maps to '\(option)', which is no declared option's long name")
                }
            }
            let names = parameters.flatMap(\.names)
            #expect(Set(names).count == names.count, "\(adapter) declares a parameter twice")
        }
    }

    /// Each translation writes only options that the parameters it was given declare.
    @Test func translationsUseOnlyTheDeclaredOptions() throws {
        let adapters: [any URLAdapter] = [NextImageAdapter(origins: URLAdapterTests.origins),
                                          CloudflareAdapter(origins: URLAdapterTests.origins),
                                          ImgproxyAdapter(origins: URLAdapterTests.origins, watermark: "logo"),
                                          ThumborAdapter(origins: URLAdapterTests.origins), ImgixAdapter()]
        var checked = 0
        let twins = URLAdapterTests.twins + ImgproxyAdapterTests.twins
        for (uri, _) in twins {
            let path = String(uri.prefix { $0 != "?" })
            let query = uri.contains("?") ? String(uri.drop { $0 != "?" }.dropFirst()) : nil
            for adapter in adapters {
                guard let adapted = try adapter.adapt(path: path, query: query) else { continue }
                let table = Self.tables.first { $0.adapter == adapter.name }!.parameters
                let given = Self.parameterNames(path: path, query: query, adapter: adapter.name)
                let allowed = Set(table.filter { !Set($0.names).isDisjoint(with: given) }.flatMap(\.options))
                for option in adapted.options {
                    let name = SpecParser.canonicalOptionName(String(option.prefix { $0 != ":" }))
                    #expect(allowed.contains(name), "\(uri): \(adapter.name) wrote \(option), not declared for \(given.sorted())")
                }
                checked += 1
                break
            }
        }
        #expect(checked == twins.count)
    }

    @Test func refusalsSayWhy() throws {
        #expect(throws: AdapterError.self) { try ImgixAdapter().adapt(path: "/cat.jpg", query: "mark=http%3A%2F%2Fx%2Fl.png") }
        do {
            _ = try ImgixAdapter().adapt(path: "/cat.jpg", query: "mark=http%3A%2F%2Fx%2Fl.png")
        } catch {
            #expect(error.message.contains("Kiln draws only configured watermarks"), "\(error.message)")
            #expect(!error.isBadSignature)
        }
    }

    /// Every parameter an adapter translates writes at least one option, and refuses nothing
    /// (imgix's `s` and `ixlib`, Cloudflare's `onerror`, thumbor's signature segments and `filters:`
    /// wrapper write none: they change no pixel; thumbor's `no_upscale()` only withholds `el:1`).
    @Test func translatedParametersWriteOptions() {
        let silent: Set<String> = ["ixlib", "s", "onerror", "unsafe", "hmac", "filters", "no_upscale"]
        for (adapter, _, _, parameters) in Self.tables {
            for p in parameters where p.refusal == nil && !silent.contains(p.name) {
                #expect(!p.options.isEmpty, "\(adapter) \(p.name) writes no option")
            }
        }
    }

    /// The docs list every parameter of each adapter in the adapter's table.
    @Test func docsListEveryParameter() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for (adapter, file, section, parameters) in Self.tables {
            let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
            guard let start = text.range(of: section + "\n") else {
                Issue.record("\(file) has no section \(section)")
                continue
            }
            let body = text[start.upperBound...].prefix { _ in true }
            let end = body.range(of: "\n### ")?.lowerBound ?? body.endIndex
            let firstCells = body[..<end].split(separator: "\n").filter { $0.hasPrefix("| ") }
                .map { $0.dropFirst(2).prefix { $0 != "|" } }
            for p in parameters {
                #expect(firstCells.contains { $0.contains("`\(p.name)") }, "\(adapter): \(file) does not list `\(p.name)`")
            }
        }
    }

    static func parameterNames(path: String, query: String?, adapter: String) -> Set<String> {
        if adapter == "imgproxy" {
            let url = try? ImgproxyURL.parse(path, adapter: adapter)
            var names = Set((url?.options ?? []).map { String($0.prefix { $0 != ":" }) })
            if url?.fileExtension != nil { names.insert("format") }
            return names
        }
        if adapter == "cloudflare" {
            let options = path.dropFirst(CloudflareAdapter.prefix.count).prefix { $0 != "/" }
            return Set(options.split(separator: ",").map { String($0.prefix { $0 != "=" }) })
        }
        if adapter == "thumbor", var url = ThumborURL.parse(path) {
            try? url.readParts(adapter: adapter)
            let filters = url.filters.flatMap { try? ThumborFilters($0, adapter: adapter) }
            return url.partNames.union(filters?.names ?? [])
        }
        return Set((query ?? "").split(separator: "&").map { String($0.prefix { $0 != "=" }) })
    }
}
