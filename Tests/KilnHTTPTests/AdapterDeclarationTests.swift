import Foundation
import KilnModel
import Testing
@testable import KilnHTTP

/// The adapters' parameter tables (`AdapterParameter`) against the option declarations
/// (`OptionCatalog`), the adapters' translations and docs/integrations.md.
@Suite struct AdapterDeclarationTests {
    static let tables: [(adapter: String, section: String, parameters: [AdapterParameter])] = [
        ("nextjs", "### Next.js", NextImageAdapter.parameters),
        ("cloudflare", "### Cloudflare", CloudflareAdapter.parameters),
        ("imgix", "### imgix", ImgixAdapter.parameters),
        ("thumbor", "### thumbor", ThumborAdapter.parameters),
    ]

    @Test func everyMappedOptionIsDeclared() {
        for (adapter, _, parameters) in Self.tables {
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
                                          ThumborAdapter(origins: URLAdapterTests.origins), ImgixAdapter()]
        var checked = 0
        for (uri, _) in URLAdapterTests.twins {
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
        #expect(checked == URLAdapterTests.twins.count)
    }

    @Test func refusalsSayWhy() throws {
        #expect(throws: AdapterError.self) { try CloudflareAdapter().adapt(path: "/cdn-cgi/image/trim=10;0;10;0/cat.jpg", query: nil) }
        do {
            _ = try CloudflareAdapter().adapt(path: "/cdn-cgi/image/trim=10;0;10;0/cat.jpg", query: nil)
        } catch {
            #expect(error.message.contains("uniform borders"), "\(error.message)")
            #expect(!error.message.contains("no trim"))
        }
    }

    /// docs/integrations.md lists every parameter of each adapter in the adapter's table.
    @Test func docsListEveryParameter() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/integrations.md"), encoding: .utf8)
        for (adapter, section, parameters) in Self.tables {
            guard let start = text.range(of: section + "\n") else {
                Issue.record("docs/integrations.md has no section \(section)")
                continue
            }
            let body = text[start.upperBound...].prefix { _ in true }
            let end = body.range(of: "\n### ")?.lowerBound ?? body.endIndex
            let firstCells = body[..<end].split(separator: "\n").filter { $0.hasPrefix("| ") }
                .map { $0.dropFirst(2).prefix { $0 != "|" } }
            for p in parameters {
                #expect(firstCells.contains { $0.contains("`\(p.name)") }, "\(adapter): docs/integrations.md does not list `\(p.name)`")
            }
        }
    }

    static func parameterNames(path: String, query: String?, adapter: String) -> Set<String> {
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
