import KilnModel
import Testing
import KilnHTTP
@testable import KilnServer

/// The `[security]` section as `KilnConfiguration` reads it (key and salt files resolved); the
/// request gate's tests are in KilnHTTPTests (RequestGateTests).
@Suite struct SecurityConfigurationTests {
    @Test func securityConfiguration() throws {
        var values = ConfigValues(["security.keys": "aa11,bb22", "security.salts": "01"])
        #expect(throws: ConfigError.self) { try KilnConfiguration(values) }
        values = ConfigValues(["security.keys": "aa11, bb22", "security.salts": "01,02", "security.signature_size": "8"])
        let c = try KilnConfiguration(values)
        #expect(c.security.signingKeys == [SigningKey(key: [0xaa, 0x11], salt: [1]), SigningKey(key: [0xbb, 0x22], salt: [2])])
        #expect(c.security.urlSignature.size == 8)
        #expect(c.security.urlSignature.allowUnsigned == false)
        #expect(try KilnConfiguration(ConfigValues()).security.urlSignature.allowUnsigned)
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["security.keys": "abc"])) }
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["security.signature_size": "33"])) }
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["security.key_file": "/nonexistent/k"])) }
        #expect(throws: ConfigError.self) { try KilnConfiguration(ConfigValues(["security.presets_only_allow": "f;rm"])) }
        #expect(try KilnConfiguration(ConfigValues(["security.allow_unsigned": "on"])).security.allowUnsigned == .on)
    }
}
