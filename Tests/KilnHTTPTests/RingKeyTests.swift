import Foundation
import Testing
@testable import KilnHTTP

/// The rings' hash keys in the shipped recipes against `RingKey` (the adapters' declarations).
@Suite struct RingKeyTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test func theParametersAreTheAdaptersOwn() {
        let names = RingKey.queryParameters
        #expect(names.contains("url") && names.contains("w") && names.contains("fm") && names.contains("crop"))
        #expect(!names.contains("ixlib"), "a parameter that changes nothing would scatter one variant")
        for name in ImgixAdapter.parameters.filter({ !$0.options.isEmpty }).map(\.name) {
            #expect(names.contains(name), "\(name)")
        }
    }

    @Test func nginxHashesThem() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("nginx/kiln-hosts.conf"), encoding: .utf8)
        #expect(text.contains("    default    \(RingKey.nginx);\n"), "nginx/kiln-hosts.conf's $kiln_adapter_args map differs from RingKey.nginx")
        #expect(text.contains("    hash $kiln_variant$kiln_adapter_args consistent;\n"))
    }

    @Test func haproxyHashesThem() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("haproxy/kiln-hosts.cfg"), encoding: .utf8)
        #expect(text.contains("http-request set-var-fmt(txn.kiln_key) \(RingKey.haproxy) if { query -m found }\n"),
                "haproxy/kiln-hosts.cfg's key differs from RingKey.haproxy")
        #expect(text.contains("    balance hash var(txn.kiln_key)\n"))
    }
}
