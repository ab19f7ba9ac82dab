import KilnModel
import KilnTestBytes
import Testing
@testable import KilnHTTP

/// docs/migrate-<server>.md: each page's mapping table is generated from its adapter's
/// declarations (`AdapterParameter`); `KILN_DOCS_UPDATE=1` rewrites them.
@Suite struct MigrationDocsTests {
    static let pages: [(file: String, foreign: String, parameters: [AdapterParameter])] = [
        ("docs/migrate-imgproxy.md", "imgproxy", ImgproxyAdapter.parameters),
        ("docs/migrate-thumbor.md", "thumbor", ThumborAdapter.parameters),
        ("docs/migrate-imgix.md", "imgix", ImgixAdapter.parameters),
        ("docs/migrate-cloudflare.md", "Cloudflare", CloudflareAdapter.parameters),
    ]

    @Test func mappingTablesAreGenerated() throws {
        for page in Self.pages {
            let text = page.parameters.markdownTable(foreign: page.foreign)
            guard let current = try GeneratedBlock.sync(file: page.file, marker: "adapter table", text: text) else {
                Issue.record("\(page.file): no generated block 'adapter table'")
                continue
            }
            #expect(current == text, "\(page.file) differs from the declarations: run KILN_DOCS_UPDATE=1 swift test --filter MigrationDocs")
        }
    }
}
